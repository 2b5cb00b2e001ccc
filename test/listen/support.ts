import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import {
  createTaskServer,
  type TaskServer,
  type TaskServerOptions,
} from '../../src/server/index.js';
import type { ListenOptions } from '../../src/server/listen/index.js';
import type { TaskStore } from '../../src/store/port.js';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';

export const EXT = 'io.modelcontextprotocol/tasks';
export const SUB_ID = 'io.modelcontextprotocol/subscriptionId';
export const silent = { info() {}, warn() {}, error() {} };

type Json = Record<string, unknown>;

/** Test-controlled task endings: a tool awaits `gates.wait(key)`; the test calls `release`. */
export class Gates {
  readonly #waiting = new Map<string, (text: string) => void>();
  readonly #early = new Map<string, string>();

  wait(key: string, signal: AbortSignal): Promise<string> {
    const early = this.#early.get(key);
    if (early !== undefined) return Promise.resolve(early);
    return new Promise((resolve, reject) => {
      this.#waiting.set(key, resolve);
      signal.addEventListener('abort', () => reject(signal.reason), { once: true });
    });
  }

  release(key: string, text = `released ${key}`): void {
    const resolve = this.#waiting.get(key);
    if (resolve === undefined) this.#early.set(key, text);
    else resolve(text);
    this.#waiting.delete(key);
  }

  get waiting(): number {
    return this.#waiting.size;
  }
}

export interface TestApp {
  app: TaskServer;
  url: string;
  gates: Gates;
  /** Requests seen, by `Mcp-Method` header, and `tasks/get` by task id. */
  count(method: string): number;
  getsFor(taskId: string): number;
  /** TCP connections the server accepted so far. */
  connections(): number;
  /** Destroys the sockets of every open listen stream (a network break). */
  cutStreams(): number;
  close(): Promise<void>;
}

export interface AppOptions {
  store?: TaskStore;
  tokens?: Record<string, string>;
  listen?: Partial<ListenOptions>;
  runtime?: TaskServerOptions['runtime'];
}

/** A taskrail server with a `hold` tool (ends when released) behind a counting HTTP server. */
export async function startApp(options: AppOptions = {}): Promise<TestApp> {
  const gates = new Gates();
  const app = createTaskServer({
    store: options.store ?? new MemoryTaskStore(),
    logger: silent,
    runtime: options.runtime ?? { concurrency: 2000 },
    ...(options.tokens === undefined ? {} : { auth: { tokens: options.tokens } }),
    ...(options.listen === undefined ? {} : { listen: options.listen }),
  });
  app.tool(
    'hold',
    { description: 'ends when the test releases it', task: { mode: 'required' } },
    async (args, ctx) => {
      const key = String(args['key']);
      await ctx.progress(`holding ${key}`);
      const text = await gates.wait(key, ctx.signal);
      return { content: [{ type: 'text', text }] };
    },
  );
  app.tool('sleep', { description: 'sleeps ms', task: { mode: 'required' } }, async (args, ctx) => {
    await new Promise((resolve) => setTimeout(resolve, Number(args['ms'])));
    ctx.signal.throwIfAborted();
    return { content: [{ type: 'text', text: `slept ${String(args['ms'])}` }] };
  });
  app.tool(
    'ask',
    { description: 'asks a name, then greets', task: { mode: 'required' } },
    async (_args, ctx) => {
      const answer = await ctx.elicit('name', {
        message: 'Who?',
        requestedSchema: {
          type: 'object',
          properties: { name: { type: 'string' } },
          required: ['name'],
        },
      });
      return { content: [{ type: 'text', text: `Hello, ${String(answer.content?.['name'])}!` }] };
    },
  );
  app.runtime.start();
  const methods = new Map<string, number>();
  const gets = new Map<string, number>();
  const streams = new Set<Socket>();
  const http: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const method = String(req.headers['mcp-method'] ?? '?');
    methods.set(method, (methods.get(method) ?? 0) + 1);
    if (method === 'tasks/get') {
      const name = String(req.headers['mcp-name']);
      gets.set(name, (gets.get(name) ?? 0) + 1);
    }
    if (method === 'subscriptions/listen' && req.socket !== null) {
      const socket = req.socket;
      streams.add(socket);
      res.on('close', () => streams.delete(socket));
    }
    app.nodeHandler(req, res);
  });
  let connections = 0;
  http.on('connection', () => void (connections += 1));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    app,
    url: `http://127.0.0.1:${port}/mcp`,
    gates,
    count: (method) => methods.get(method) ?? 0,
    getsFor: (taskId) => gets.get(taskId) ?? 0,
    connections: () => connections,
    cutStreams() {
      const n = streams.size;
      for (const socket of streams) socket.destroy();
      streams.clear();
      return n;
    },
    async close() {
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
      await app.close(1000);
    },
  };
}

export function envelope(declare = true): Json {
  return {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': declare ? { extensions: { [EXT]: {} } } : {},
  };
}

function headers(method: string, bearer?: string, name?: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': method,
    ...(name === undefined ? {} : { 'mcp-name': name }),
    ...(bearer === undefined ? {} : { authorization: `Bearer ${bearer}` }),
  };
}

let nextId = 0;

/** One raw JSON-RPC request; returns the HTTP status and the parsed body. */
export async function rpc(
  url: string,
  method: string,
  params: Json,
  { bearer, name }: { bearer?: string; name?: string } = {},
): Promise<{ status: number; body: Json }> {
  const body = { jsonrpc: '2.0', id: ++nextId, method, params: { ...params, _meta: envelope() } };
  const res = await fetch(url, {
    method: 'POST',
    headers: headers(method, bearer, name),
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Json };
}

/** Starts a `hold` task and returns its id. */
export async function startHold(url: string, key: string, bearer?: string): Promise<string> {
  const { body } = await rpc(
    url,
    'tools/call',
    { name: 'hold', arguments: { key } },
    { bearer, name: 'hold' },
  );
  const result = body['result'] as Json | undefined;
  if (result?.['resultType'] !== 'task')
    throw new Error(`hold did not start a task: ${JSON.stringify(body)}`);
  return String(result['taskId']);
}

export async function getTask(url: string, taskId: string, bearer?: string): Promise<Json> {
  const { body } = await rpc(url, 'tasks/get', { taskId }, { bearer, name: taskId });
  return body['result'] as Json;
}

/** A raw listen stream: every JSON-RPC message it carried, and whether it ended. */
export interface RawListen {
  status: number;
  /** The error reply, when the server refused with JSON. */
  error?: Json;
  messages: Json[];
  ended: Promise<void>;
  done: boolean;
  close(): void;
}

export async function openListen(
  url: string,
  taskIds: unknown,
  {
    bearer,
    declare = true,
    id = `listen-${++nextId}`,
    extra = {},
  }: { bearer?: string; declare?: boolean; id?: string; extra?: Json } = {},
): Promise<RawListen> {
  const controller = new AbortController();
  const body = {
    jsonrpc: '2.0',
    id,
    method: 'subscriptions/listen',
    params: { notifications: { taskIds, ...extra }, _meta: envelope(declare) },
  };
  const res = await fetch(url, {
    method: 'POST',
    headers: headers('subscriptions/listen', bearer),
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  const listen: RawListen = {
    status: res.status,
    messages: [],
    ended: Promise.resolve(),
    done: false,
    close: () => controller.abort(),
  };
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) {
    listen.error = (await res.json()) as Json;
    listen.done = true;
    return listen;
  }
  listen.ended = readFrames(res.body as ReadableStream<Uint8Array>, (m) => listen.messages.push(m))
    .catch(() => undefined)
    .finally(() => (listen.done = true));
  return listen;
}

async function readFrames(
  body: ReadableStream<Uint8Array>,
  onMessage: (m: Json) => void,
): Promise<void> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    const events = buffer.split('\n\n');
    buffer = events.pop() ?? '';
    for (const event of events) {
      const data = event
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trim())
        .join('');
      if (data !== '') onMessage(JSON.parse(data) as Json);
    }
  }
}

export function notificationsOf(listen: RawListen): Json[] {
  return listen.messages.filter((m) => m['method'] === 'notifications/tasks');
}

export function ackOf(listen: RawListen): Json | undefined {
  return listen.messages.find((m) => m['method'] === 'notifications/subscriptions/acknowledged');
}
