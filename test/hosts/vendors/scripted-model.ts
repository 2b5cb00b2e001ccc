import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { closeNow, listenLocal } from '../../helpers/ports.js';

export type Json = Record<string, unknown>;

/** One tool call the model made and what the host handed back to it. */
export interface Exchange {
  tool: string;
  args: Json;
  /** The tool result exactly as the host put it in front of the model. */
  seen: string;
}

/** The model's next move: call a tool (by the name the host gave it), or answer and stop. */
export type Step = { tool: string; args: Json } | { text: string };

/** Decides the next step from the tool calls so far in the conversation (read from the request). */
export type Script = (history: Exchange[], offered: string[]) => Step;

/** What a vendor adapter makes of one request. */
export interface Turn {
  /** The main conversation (a side request, e.g. Gemini's routing, is answered otherwise). */
  main: boolean;
  history: Exchange[];
  /** The names of the tools the host offered the model. */
  offered: string[];
}

/** How one vendor's API is spoken: reading a request, writing an answer. */
export interface Vendor {
  name: string;
  /** Reads the conversation; undefined when the request is not a model call (e.g. /models). */
  parse(url: string, body: Json): Turn | undefined;
  /** Writes the step as the vendor's response (streamed SSE or JSON). */
  answer(res: ServerResponse, url: string, step: Step, body: Json): void;
  /** Answers a request that is not a model turn (model lists, side calls). */
  other(res: ServerResponse, url: string, body: Json): void;
}

/**
 * A scripted stand-in of a vendor's model API on 127.0.0.1: every turn of the main
 * conversation asks the script for the next step, given what the host sent back of the earlier
 * tool calls. Every request is kept, so a test can show what the host sent and what the model saw.
 */
export class ScriptedModel {
  readonly requests: { url: string; body: Json }[] = [];
  /** The history of the latest main-conversation turn: every call and what the model saw. */
  history: Exchange[] = [];
  offered: string[] = [];
  /** Steps the script took, in order (a retried request repeats one). */
  readonly steps: Step[] = [];
  readonly #vendor: Vendor;
  readonly #script: Script;
  #server: Server | undefined;

  constructor(vendor: Vendor, script: Script) {
    this.#vendor = vendor;
    this.#script = script;
  }

  async start(): Promise<string> {
    this.#server = createServer((req, res) => {
      void readJson(req).then((body) => this.#handle(req.url ?? '', body, res));
    });
    return listenLocal(this.#server);
  }

  async stop(): Promise<void> {
    const server = this.#server;
    if (server !== undefined) await closeNow(server);
  }

  /**
   * A short transcript: each call and the first characters of what the model saw back; with
   * `keep`, only the first calls and the last of a long run (the middle said in one line).
   */
  transcript(preview = 300, keep = Infinity): string {
    const lines: string[] = [];
    const shown = this.history.length > keep + 1;
    this.history.forEach((exchange, i) => {
      if (shown && i >= keep - 1 && i < this.history.length - 1) {
        if (i === keep - 1) lines.push(`… ${this.history.length - keep} more calls like these …`);
        return;
      }
      lines.push(`model calls ${exchange.tool} ${JSON.stringify(exchange.args)}`);
      const seen = exchange.seen;
      const cut =
        seen.length > preview ? `${seen.slice(0, preview)}… (${seen.length} chars)` : seen;
      lines.push(`model sees  ${cut.replace(/\n/g, '\n            ')}`);
    });
    const last = this.steps.at(-1);
    if (last !== undefined && 'text' in last) lines.push(`model says  ${last.text}`);
    return lines.join('\n');
  }

  #handle(url: string, body: Json, res: ServerResponse): void {
    this.requests.push({ url, body });
    const turn = this.#vendor.parse(url, body);
    if (turn === undefined || !turn.main) {
      this.#vendor.other(res, url, body);
      return;
    }
    this.history = turn.history;
    this.offered = turn.offered;
    let step: Step;
    try {
      step = this.#script(turn.history, turn.offered);
    } catch (error) {
      step = { text: `script failed: ${String(error)}` };
    }
    this.steps.push(step);
    this.#vendor.answer(res, url, step, body);
  }
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

export function sseHead(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

export function parseArgs(text: unknown): Json {
  if (typeof text !== 'string') return (text ?? {}) as Json;
  try {
    return JSON.parse(text) as Json;
  } catch {
    return { unparsed: text };
  }
}

/** The text of a content value a host sent: a string, or text parts joined. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return JSON.stringify(content);
  return (content as Json[])
    .map((part) => (typeof part['text'] === 'string' ? part['text'] : JSON.stringify(part)))
    .join('');
}

/** A tool call or a tool result in a transcript whose results name their call by id. */
export type Entry =
  { call: string; tool: string; args: unknown } | { result: string; content: unknown };

/** The exchanges of such a transcript (both OpenAI APIs): each call, with what came back of it. */
export function exchangesById(entries: Entry[]): Exchange[] {
  const history: Exchange[] = [];
  const byCall = new Map<string, Exchange>();
  for (const entry of entries) {
    if ('call' in entry) {
      const exchange = { tool: entry.tool, args: parseArgs(entry.args), seen: '' };
      byCall.set(entry.call, exchange);
      history.push(exchange);
    } else {
      const exchange = byCall.get(entry.result);
      if (exchange !== undefined) exchange.seen = textOf(entry.content);
    }
  }
  return history;
}
