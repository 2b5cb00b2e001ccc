import type { ServerResponse } from 'node:http';
import {
  exchangesById,
  sendJson,
  sseHead,
  type Entry,
  type Json,
  type Step,
  type Vendor,
} from './scripted-model.js';

let chunkCounter = 0;

/** OpenAI Chat Completions (`POST /v1/chat/completions`, streamed), as Copilot CLI's BYOK speaks it. */
export const openAiChat: Vendor = {
  name: 'OpenAI Chat Completions',
  parse(url, body) {
    if (!url.includes('/chat/completions')) return undefined;
    const tools = Array.isArray(body['tools']) ? (body['tools'] as Json[]) : [];
    const offered = tools.map((tool) => String((tool['function'] as Json | undefined)?.['name']));
    const messages = Array.isArray(body['messages']) ? (body['messages'] as Json[]) : [];
    return {
      main: offered.length > 0,
      history: exchangesById(messages.flatMap(entriesOf)),
      offered,
    };
  },
  answer(res, _url, step, body) {
    chunkCounter += 1;
    const id = `chatcmpl-${chunkCounter}`;
    const delta =
      'text' in step
        ? { role: 'assistant', content: step.text }
        : {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                index: 0,
                id: `call_${chunkCounter}`,
                type: 'function',
                function: { name: step.tool, arguments: JSON.stringify(step.args) },
              },
            ],
          };
    const finish = 'text' in step ? 'stop' : 'tool_calls';
    if (body['stream'] === false) {
      const message = { ...delta, tool_calls: 'tool' in step ? delta.tool_calls : undefined };
      return sendJson(res, 200, {
        id,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: String(body['model'] ?? 'gpt-5.4'),
        choices: [{ index: 0, message, finish_reason: finish }],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      });
    }
    sseHead(res);
    const base = { id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000) };
    const model = String(body['model'] ?? 'gpt-5.4');
    send(res, { ...base, model, choices: [{ index: 0, delta, finish_reason: null }] });
    send(res, { ...base, model, choices: [{ index: 0, delta: {}, finish_reason: finish }] });
    send(res, {
      ...base,
      model,
      choices: [],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    });
    res.end('data: [DONE]\n\n');
  },
  other(res, url, body) {
    if (url.includes('/models')) {
      return sendJson(res, 200, { object: 'list', data: [{ id: 'gpt-5.4', object: 'model' }] });
    }
    if (url.includes('/chat/completions')) return openAiChat.answer(res, url, { text: 'ok' }, body);
    sendJson(res, 404, { error: { message: `no ${url} here` } });
  },
};

function send(res: ServerResponse, chunk: Json): void {
  res.write(`data: ${JSON.stringify(chunk)}\n\n`);
}

/** A message's tool calls, or the tool result it carries. */
function entriesOf(message: Json): Entry[] {
  if (message['role'] === 'tool') {
    return [{ result: String(message['tool_call_id']), content: message['content'] }];
  }
  if (message['role'] !== 'assistant' || !Array.isArray(message['tool_calls'])) return [];
  return (message['tool_calls'] as Json[]).map((call) => {
    const fn = (call['function'] ?? {}) as Json;
    return { call: String(call['id']), tool: String(fn['name']), args: fn['arguments'] };
  });
}

export type { Step };
