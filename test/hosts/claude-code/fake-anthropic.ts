import { createServer, type IncomingMessage, type Server } from 'node:http';
import { closeNow, listenLocal } from '../../helpers/ports.js';

/** One scripted turn of the stand-in model: call a tool, or say something and stop. */
export type Step = { tool: string; input: Record<string, unknown> } | { text: string };
/** Decides the next step from the turn number and the last tool result the host sent back. */
export type Script = (turn: number, last: ToolResultSeen | undefined) => Step;

type Json = Record<string, unknown>;
export interface ToolResultSeen {
  toolUseId: string;
  /** The text of the tool_result as the host passed it to the model. */
  text: string;
  isError: boolean;
}

/**
 * A scripted stand-in of the Anthropic Messages API (`POST /v1/messages`, streamed SSE). The
 * main conversation (a request that offers ToolSearch) gets the next step of the script,
 * counted by the assistant turns already in it; side requests (titles, summaries) get "ok".
 * Every tool_result the host sends back is recorded, so a test checks what the model saw.
 */
export class FakeAnthropic {
  readonly results: ToolResultSeen[] = [];
  /** The text of the last user message of each main-conversation request (task notifications). */
  readonly userTexts: string[] = [];
  readonly #script: Script;
  #server: Server | undefined;

  constructor(script: Script | Step[]) {
    this.#script = Array.isArray(script) ? (turn) => script[turn] ?? { text: 'All done.' } : script;
  }

  async start(): Promise<string> {
    this.#server = createServer((req, res) => {
      void readJson(req).then((body) => {
        if (!(req.url ?? '').startsWith('/v1/messages') || req.method !== 'POST') {
          res.writeHead(404, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: 'no' } }),
          );
          return;
        }
        if ((req.url ?? '').includes('count_tokens')) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ input_tokens: 10 }));
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        const [step, turn] = this.#answer(body);
        res.end(sse(step, `toolu_${turn}`));
      });
    });
    return listenLocal(this.#server);
  }

  async stop(): Promise<void> {
    const server = this.#server;
    if (server !== undefined) await closeNow(server);
  }

  /** The tool results seen for a tool_use id the script created (`toolu_N` for step N). */
  resultOfStep(index: number): ToolResultSeen | undefined {
    return this.results.find((result) => result.toolUseId === `toolu_${index}`);
  }

  #answer(body: Json): [Step, number] {
    const tools = Array.isArray(body['tools']) ? (body['tools'] as Json[]) : [];
    if (!tools.some((tool) => tool['name'] === 'ToolSearch')) return [{ text: 'ok' }, -1];
    const messages = Array.isArray(body['messages']) ? (body['messages'] as Json[]) : [];
    const last = this.#record(messages);
    const lastUser = messages.filter((message) => message['role'] === 'user').at(-1);
    if (lastUser !== undefined) this.userTexts.push(textOf(lastUser['content']));
    const turn = messages.filter((message) => message['role'] === 'assistant').length;
    return [this.#script(turn, last), turn];
  }

  #record(messages: Json[]): ToolResultSeen | undefined {
    let last: ToolResultSeen | undefined;
    for (const message of messages) {
      if (message['role'] !== 'user' || !Array.isArray(message['content'])) continue;
      for (const block of message['content'] as Json[]) {
        if (block['type'] !== 'tool_result') continue;
        const id = String(block['tool_use_id']);
        last = this.results.find((seen) => seen.toolUseId === id);
        if (last !== undefined) continue;
        last = {
          toolUseId: id,
          text: textOf(block['content']),
          isError: block['is_error'] === true,
        };
        this.results.push(last);
      }
    }
    return last;
  }
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return JSON.stringify(content);
  return (content as Json[])
    .map((block) => (block['type'] === 'text' ? String(block['text']) : JSON.stringify(block)))
    .join('\n');
}

async function readJson(req: IncomingMessage): Promise<Json> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json;
  } catch {
    return {};
  }
}

let turnCounter = 0;

function sse(step: Step, toolUseId: string): string {
  turnCounter += 1;
  const events: [string, Json][] = [
    [
      'message_start',
      {
        type: 'message_start',
        message: {
          id: `msg_${turnCounter}`,
          type: 'message',
          role: 'assistant',
          model: 'claude-sonnet-4-5',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 10, output_tokens: 1 },
        },
      },
    ],
  ];
  if ('tool' in step) {
    events.push(
      [
        'content_block_start',
        {
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'tool_use', id: toolUseId, name: step.tool, input: {} },
        },
      ],
      [
        'content_block_delta',
        {
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'input_json_delta', partial_json: JSON.stringify(step.input) },
        },
      ],
    );
  } else {
    events.push(
      [
        'content_block_start',
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      ],
      [
        'content_block_delta',
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: step.text } },
      ],
    );
  }
  events.push(
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    [
      'message_delta',
      {
        type: 'message_delta',
        delta: { stop_reason: 'tool' in step ? 'tool_use' : 'end_turn', stop_sequence: null },
        usage: { output_tokens: 5 },
      },
    ],
    ['message_stop', { type: 'message_stop' }],
  );
  return events
    .map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
    .join('');
}
