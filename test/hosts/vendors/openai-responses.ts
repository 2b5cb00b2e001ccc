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

let responseCounter = 0;

/** The OpenAI Responses API (`POST /v1/responses`, streamed SSE), as Codex CLI speaks it. */
export const openAiResponses: Vendor = {
  name: 'OpenAI Responses API',
  parse(url, body) {
    if (!url.includes('/responses')) return undefined;
    const input = Array.isArray(body['input']) ? (body['input'] as Json[]) : [];
    const history = exchangesById(input.flatMap(entriesOf));
    return { main: true, history, offered: offeredTools(body['tools']) };
  },
  answer(res, _url, step) {
    responseCounter += 1;
    const id = `resp_${responseCounter}`;
    sseHead(res);
    send(res, { type: 'response.created', response: { id } });
    send(res, { type: 'response.output_item.done', item: itemOf(step, responseCounter) });
    const usage = { input_tokens: 10, output_tokens: 5, total_tokens: 15 };
    send(res, { type: 'response.completed', response: { id, usage } });
    res.end();
  },
  other(res, url) {
    if (url.includes('/models')) sendJson(res, 200, { models: [] });
    else sendJson(res, 404, { error: { message: `no ${url} here` } });
  },
};

function send(res: ServerResponse, event: Json): void {
  res.write(`event: ${String(event['type'])}\ndata: ${JSON.stringify(event)}\n\n`);
}

/** A step as a Responses output item; a tool named `namespace.function` is split back. */
function itemOf(step: Step, counter: number): Json {
  if ('text' in step) {
    return {
      type: 'message',
      role: 'assistant',
      id: `msg_${counter}`,
      content: [{ type: 'output_text', text: step.text }],
    };
  }
  if (step.tool === 'tool_search') {
    // Codex's client-side tool search (the tools of a catalogued model are deferred behind it).
    return {
      type: 'tool_search_call',
      id: `ts_${counter}`,
      call_id: `call_${counter}`,
      status: 'completed',
      execution: 'client',
      arguments: step.args,
    };
  }
  const dot = step.tool.lastIndexOf('.');
  const named =
    dot < 0
      ? { name: step.tool }
      : { namespace: step.tool.slice(0, dot), name: step.tool.slice(dot + 1) };
  return {
    type: 'function_call',
    id: `fc_${counter}`,
    call_id: `call_${counter}`,
    ...named,
    arguments: JSON.stringify(step.args),
  };
}

/** An input item as a tool call or a tool result (Codex's tool search counts as both). */
function entriesOf(item: Json): Entry[] {
  if (item['type'] === 'function_call' || item['type'] === 'tool_search_call') {
    const name = String(item['name'] ?? 'tool_search');
    const tool = typeof item['namespace'] === 'string' ? `${item['namespace']}.${name}` : name;
    return [{ call: String(item['call_id']), tool, args: item['arguments'] }];
  }
  if (item['type'] === 'function_call_output' || item['type'] === 'tool_search_output') {
    return [{ result: String(item['call_id']), content: item['output'] ?? item['tools'] }];
  }
  return [];
}

/** Tool names offered, a namespace's functions as `namespace.function`. */
function offeredTools(tools: unknown): string[] {
  if (!Array.isArray(tools)) return [];
  const names: string[] = [];
  for (const tool of tools as Json[]) {
    const nested = tool['tools'];
    if (Array.isArray(nested)) {
      for (const inner of nested as Json[])
        names.push(`${String(tool['name'])}.${String(inner['name'])}`);
    } else names.push(String(tool['name'] ?? tool['type']));
  }
  return names;
}
