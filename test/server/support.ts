import { request as httpRequest } from 'node:http';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';
import { createTaskServer, type TaskServer } from '../../src/server/index.js';
import registerDemo from '../../src/server/tools/demo.js';
import type { TaskStore } from '../../src/store/port.js';
import { waitFor } from '../helpers/wait.js';

export const EXT = 'io.modelcontextprotocol/tasks';
export const TASKS_CAPS = { extensions: { [EXT]: {} } };

export interface Running {
  app: TaskServer;
  url: string;
  store: TaskStore;
  close(): Promise<void>;
}

/** A demo server on 127.0.0.1 with a memory store (two bearer tokens when `auth`). */
export async function startDemo(
  options: { auth?: boolean; maxBodyBytes?: number } = {},
): Promise<Running> {
  const store = new MemoryTaskStore();
  const app = createTaskServer({
    store,
    name: 'test',
    version: '1.0.0',
    ...(options.auth === true ? { auth: { tokens: { 'tok-a': 'alice', 'tok-b': 'bob' } } } : {}),
    ...(options.maxBodyBytes === undefined ? {} : { maxBodyBytes: options.maxBodyBytes }),
  });
  registerDemo(app);
  const { url } = await app.listen(0, '127.0.0.1');
  return {
    app,
    url,
    store,
    async close() {
      await app.close(1000);
      await store.close();
    },
  };
}

export interface RawReply {
  status: number;
  body: {
    result?: Record<string, unknown>;
    error?: { code: number; message: string; data?: unknown };
  } & Record<string, unknown>;
}

export interface CallOptions {
  caps?: Record<string, unknown>;
  bearer?: string;
  headers?: Record<string, string>;
  id?: number | string;
  /** More `_meta` keys beside the envelope. */
  meta?: Record<string, unknown>;
}

let nextId = 1;

function nameHeader(method: string, params: Record<string, unknown>): string | undefined {
  if (method === 'tools/call') return params['name'] as string;
  if (method.startsWith('tasks/')) return params['taskId'] as string | undefined;
  return undefined;
}

/** One 2026-07-28 POST with the routing headers and `_meta` a conforming client sends. */
export async function rpc(
  url: string,
  method: string,
  params: Record<string, unknown>,
  options: CallOptions = {},
): Promise<RawReply> {
  const { body, headers } = wire2026Post(method, params, options);
  return post(url, body, headers);
}

/** The body and headers of a 2026-07-28 POST, for tests that read the raw reply. */
export function wire2026Post(
  method: string,
  params: Record<string, unknown>,
  options: CallOptions = {},
): { body: string; headers: Headers } {
  const body = {
    jsonrpc: '2.0',
    id: options.id ?? nextId++,
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'test', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': options.caps ?? TASKS_CAPS,
        ...options.meta,
      },
    },
  };
  const headers = new Headers({
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': method,
  });
  const name = nameHeader(method, params);
  if (typeof name === 'string') headers.set('mcp-name', name);
  if (options.bearer !== undefined) headers.set('authorization', `Bearer ${options.bearer}`);
  for (const [key, value] of Object.entries(options.headers ?? {})) headers.set(key, value);
  return { body: JSON.stringify(body), headers };
}

export async function post(
  url: string,
  body: string,
  headers: Headers | Record<string, string>,
): Promise<RawReply> {
  const res = await fetch(url, { method: 'POST', headers, body });
  const text = await res.text();
  return { status: res.status, body: parseBody(text) };
}

function parseBody(text: string): RawReply['body'] {
  if (text === '') return {};
  if (text.startsWith('event:') || text.startsWith('data:') || text.startsWith(':')) {
    const data = text
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).trim());
    const last = data
      .reverse()
      .find((line) => line.includes('"result"') || line.includes('"error"'));
    return last === undefined ? {} : (JSON.parse(last) as RawReply['body']);
  }
  try {
    return JSON.parse(text) as RawReply['body'];
  } catch {
    return { raw: text };
  }
}

/** Calls a tool as a task and returns its id. */
export async function createTask(
  url: string,
  name: string,
  args: Record<string, unknown>,
  options: CallOptions = {},
): Promise<string> {
  const reply = await rpc(url, 'tools/call', { name, arguments: args }, options);
  const taskId = reply.body.result?.['taskId'];
  if (typeof taskId !== 'string') throw new Error(`no task: ${JSON.stringify(reply.body)}`);
  return taskId;
}

export async function getTask(
  url: string,
  taskId: string,
  options: CallOptions = {},
): Promise<Record<string, unknown>> {
  const reply = await rpc(url, 'tasks/get', { taskId }, options);
  if (reply.body.result === undefined)
    throw new Error(`tasks/get failed: ${JSON.stringify(reply.body)}`);
  return reply.body.result;
}

export function waitForStatus(
  url: string,
  taskId: string,
  statuses: string[],
  options: CallOptions = {},
): Promise<Record<string, unknown>> {
  return waitFor(
    `task ${taskId} to reach ${statuses.join('|')}`,
    async () => {
      const task = await getTask(url, taskId, options);
      return statuses.includes(task['status'] as string) ? task : undefined;
    },
    { timeoutMs: 10_000, intervalMs: 20 },
  );
}

/**
 * One request on a fresh connection to 127.0.0.1, sent as given (any method, any headers, even
 * ones `fetch` would refuse); its status and body as text.
 */
export function httpText(
  port: number,
  options: { method: string; path: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; text: string }> {
  const { method, path, headers = {}, body } = options;
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
