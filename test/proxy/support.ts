import { mkdtempSync, rmSync } from 'node:fs';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Logger } from '../../src/runtime/api.js';
import { startProxy, type ProxyOptions, type RunningProxy } from '../../src/proxy/index.js';
import { createTaskServer, type TaskServer } from '../../src/server/index.js';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import type { JsonObject } from '../../src/task/record.js';
import { startNode, type Child } from '../helpers/child.js';
import { waitFor } from '../helpers/wait.js';
import { getTask, rpc, type CallOptions } from '../server/support.js';
import { freePort } from '../helpers/ports.js';

export { freePort };

const ROOT = resolve(new URL('../../..', import.meta.url).pathname);
export const EVERYTHING = join(
  ROOT,
  'node_modules/@modelcontextprotocol/server-everything/dist/index.js',
);
/** The end of a `taskrail proxy` command line that runs server-everything on stdio. */
export const EVERYTHING_STDIO = ['--', process.execPath, EVERYTHING, 'stdio'];
export const FILESYSTEM = join(
  ROOT,
  'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js',
);
export const CLI = join(ROOT, 'dist/cli/main.js');

/** Log lines kept in memory, so a test can look for the upstream's stderr. */
export function memoryLogger(): Logger & { lines: JsonObject[] } {
  const lines: JsonObject[] = [];
  const push = (level: string) => (message: string, fields?: JsonObject) =>
    lines.push({ level, message, ...fields });
  return { lines, info: push('info'), warn: push('warn'), error: push('error') };
}

export interface RunningProxyServer {
  app: TaskServer;
  url: string;
  proxy: RunningProxy;
  logger: ReturnType<typeof memoryLogger>;
  close(): Promise<void>;
}

/** A proxy in this process, on a fresh SQLite file, in front of `upstream`. */
export async function startInProcess(
  options: Omit<ProxyOptions, 'logger' | 'version'>,
  server: { auth?: Record<string, string> } = {},
): Promise<RunningProxyServer> {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-proxy-'));
  const store = new SqliteTaskStore(join(dir, 'tasks.db'));
  const logger = memoryLogger();
  const app = createTaskServer({
    store,
    logger,
    ...(server.auth === undefined ? {} : { auth: { tokens: server.auth } }),
  });
  const proxy = await startProxy(app, { ...options, logger, version: '0.0.0-test' });
  const { url } = await app.listen(0, '127.0.0.1');
  return {
    app,
    url,
    proxy,
    logger,
    async close() {
      await app.close(1000);
      await proxy.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A port that was free a moment ago (server-everything cannot listen on port 0 and say which). */
/** server-everything in its Streamable HTTP mode, as its own process. */
export async function startEverythingHttp(): Promise<{ url: string; child: Child }> {
  const port = await freePort();
  const child = startNode(EVERYTHING, ['streamableHttp'], { PORT: String(port) });
  await child.line(new RegExp(`listening on port ${port}\\b`), 20_000, 'stderr');
  return { url: `http://127.0.0.1:${port}/mcp`, child };
}

export async function callAsTask(
  url: string,
  name: string,
  args: JsonObject,
  options: CallOptions = {},
): Promise<string> {
  const reply = await rpc(url, 'tools/call', { name, arguments: args }, options);
  const taskId = reply.body.result?.['taskId'];
  if (typeof taskId !== 'string') throw new Error(`no task: ${JSON.stringify(reply.body)}`);
  return taskId;
}

/** Polls until the task is in one of `statuses`; deadline `timeoutMs`. */
export function waitForTask(
  url: string,
  taskId: string,
  statuses: string[],
  timeoutMs = 30_000,
  options: CallOptions = {},
): Promise<Record<string, unknown>> {
  return waitFor(
    `task ${taskId} to reach ${statuses.join('|')}`,
    async () => {
      const task = await getTask(url, taskId, options);
      return statuses.includes(task['status'] as string) ? task : undefined;
    },
    { timeoutMs, intervalMs: 50 },
  );
}

export function textOf(task: Record<string, unknown>): string {
  const result = task['result'] as { content?: { text?: string }[] } | undefined;
  return (result?.content ?? []).map((c) => c.text ?? '').join('\n');
}

export interface Relay {
  url: string;
  /** `tools/call` tool names seen, in order. */
  toolCalls: string[];
  /** The JSON-RPC method of every message posted, in order. */
  methods: string[];
  /** Every request's headers, lower-cased names. */
  headers: Record<string, string | string[] | undefined>[];
  close(): Promise<void>;
}

/**
 * A byte-for-byte HTTP relay in front of the upstream that counts the tool calls reaching it,
 * so a test can tell "followed the same upstream task" from "called the tool again".
 */
export async function countingRelay(target: string): Promise<Relay> {
  const toolCalls: string[] = [];
  const methods: string[] = [];
  const headers: Relay['headers'] = [];
  const server = createHttpServer((req, res) => {
    headers.push(req.headers);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const text = body.toString();
      const call = /"method"\s*:\s*"tools\/call"[\s\S]*?"name"\s*:\s*"([^"]+)"/.exec(text);
      if (call?.[1] !== undefined) toolCalls.push(call[1]);
      const method = /"method"\s*:\s*"([^"]+)"/.exec(text);
      if (method?.[1] !== undefined) methods.push(method[1]);
      void relay(target, req, body, res);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}/mcp`,
    toolCalls,
    methods,
    headers,
    close: () =>
      new Promise((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}

async function relay(
  target: string,
  req: IncomingMessage,
  body: Buffer,
  res: ServerResponse,
): Promise<void> {
  const forwarded = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (name !== 'host' && name !== 'content-length' && typeof value === 'string') {
      forwarded.set(name, value);
    }
  }
  try {
    const answer = await fetch(target, {
      method: req.method ?? 'POST',
      headers: forwarded,
      ...(body.length > 0 ? { body } : {}),
    });
    res.writeHead(answer.status, Object.fromEntries(answer.headers));
    if (answer.body === null) return void res.end();
    const stream = Readable.fromWeb(answer.body as never);
    // A killed proxy drops its end mid-stream: end the upstream side too, quietly.
    stream.on('error', () => res.destroy());
    res.on('close', () => stream.destroy());
    stream.pipe(res);
  } catch {
    res.destroy();
  }
}
