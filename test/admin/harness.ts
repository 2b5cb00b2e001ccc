import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTaskServer, type TaskServer } from '../../src/server/app.js';
import type { TaskStore } from '../../src/store/port.js';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import type { JsonObject, TaskRecord } from '../../src/task/record.js';

/** Parsed JSON of unknown shape; the tests assert on it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Loose = any;

export const ADMIN = 'admin-token-ops';
export const VIEWER = 'admin-token-viewer';
export const CALLER = 'caller-token-alice';

export interface Harness {
  base: string;
  app: TaskServer;
  store: TaskStore;
  dbPath: string;
  create(tool: string, args?: JsonObject, principal?: string): Promise<TaskRecord>;
  open(key: string): void;
  /** Gate keys whose handler saw its signal fire. */
  aborted: Set<string>;
  runs: Runs;
  close(): Promise<void>;
}

const text = (value: string) => ({ content: [{ type: 'text', text: value }] });

/** Gates the `gate` tool waits on, by key; `open` lets a task finish. */
function gates() {
  const waiting = new Map<string, { promise: Promise<void>; open: () => void }>();
  const get = (key: string) => {
    let gate = waiting.get(key);
    if (gate === undefined) {
      let open = (): void => undefined;
      const promise = new Promise<void>((resolve) => (open = resolve));
      gate = { promise, open };
      waiting.set(key, gate);
    }
    return gate;
  };
  return { wait: (key: string) => get(key).promise, open: (key: string) => get(key).open() };
}

function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

/** `rows` lines of text with non-ASCII in each (a surrogate pair too), to be read back whole. */
export function rowsText(rows: number): string {
  return Array.from({ length: rows }, (_, i) => `row ${i}: ${'é😀'.repeat(20)}\n`).join('');
}

/** Runs of each tool, counted in the handler. */
export type Runs = Map<string, number>;

function registerAskingTools(app: TaskServer, runs: Runs): void {
  app.tool('deploy', { description: 'asks how to deploy', task: true }, async (_args, ctx) => {
    runs.set('deploy', (runs.get('deploy') ?? 0) + 1);
    const answer = await ctx.elicit('plan', {
      message: 'How should it deploy?',
      requestedSchema: {
        type: 'object',
        properties: {
          env: { type: 'string', enum: ['staging', 'production'], title: 'Environment' },
          replicas: { type: 'integer', minimum: 1, maximum: 10 },
          notify: { type: 'boolean', description: 'Tell the team' },
          reason: { type: 'string' },
        },
        required: ['env', 'reason'],
      },
    });
    return text(JSON.stringify(answer));
  });
  app.tool('ask_list', { description: 'asks for a list', task: true }, async (_args, ctx) => {
    const answer = await ctx.elicit('tags', {
      message: 'Which tags?',
      requestedSchema: {
        type: 'object',
        properties: { tags: { type: 'array', items: { type: 'object' } } },
      },
    });
    return text(JSON.stringify(answer));
  });
}

function registerTools(
  app: TaskServer,
  gate: ReturnType<typeof gates>,
  aborted: Set<string>,
): void {
  app.tool('quick', { description: 'returns at once', task: true }, () => text('quick done'));
  app.tool('oops', { description: 'ends with a tool error', task: true }, () => ({
    ...text('the input was empty'),
    isError: true,
  }));
  app.tool('gate', { description: 'waits for its gate', task: true }, async (args, ctx) => {
    await ctx.progress(`waiting at gate ${String(args['key'])}`);
    const key = String(args['key']);
    ctx.signal.addEventListener('abort', () => aborted.add(key), { once: true });
    await Promise.race([gate.wait(key), untilAborted(ctx.signal)]);
    return text('gate opened');
  });
  registerWaitingTools(app);
  app.tool(
    'emit',
    { description: 'writes a line as each gate opens', task: true },
    async (args, ctx) => {
      const lines = Array.isArray(args['lines']) ? args['lines'].map(String) : [];
      for (const [i, line] of lines.entries()) {
        await Promise.race([gate.wait(`${String(args['key'])}-${i}`), untilAborted(ctx.signal)]);
        await ctx.output(line);
      }
      return text('emitted');
    },
  );
  app.tool(
    'big',
    { description: 'returns `rows` rows of text, in structuredContent too if asked', task: true },
    (args) => {
      const rows = rowsText(Number(args['rows']));
      return args['structured'] === true
        ? { ...text(rows), structuredContent: { report: rows } }
        : text(rows);
    },
  );
  app.tool(
    'single',
    {
      description: 'one at a time, waits for its gate',
      task: { mode: 'optional', concurrency: { limit: 1 } },
    },
    async (args) => {
      await gate.wait(String(args['key']));
      return text('single done');
    },
  );
  app.tool('ask', { description: 'asks before it acts', task: true }, async (_args, ctx) => {
    const answer = await ctx.elicit('confirm', {
      message: 'Go ahead?',
      requestedSchema: {
        type: 'object',
        properties: { ok: { type: 'boolean' } },
        required: ['ok'],
      },
    });
    return text(`answer: ${answer.action}`);
  });
}

/** Tools that end their first attempt in a long durable wait: a retry's backoff, a sleep. */
function registerWaitingTools(app: TaskServer): void {
  const retry = { maxAttempts: 3, onError: true, backoffMs: 600_000, maxBackoffMs: 600_000 };
  app.tool(
    'backing_off',
    { description: 'fails, then waits ten minutes to retry', task: { mode: 'optional', retry } },
    () => {
      throw new Error('upstream answered 503');
    },
  );
  app.tool('napping', { description: 'sleeps ten minutes', task: true }, async (_args, ctx) => {
    await ctx.sleep(600_000);
    return text('rested');
  });
  app.tool(
    'once',
    { description: 'never runs twice', task: { mode: 'optional', retry: false } },
    () => text('once done'),
  );
}

/** A server on 127.0.0.1 with a real SQLite file, caller auth, and (by default) admin tokens. */
export async function startHarness(
  options: { admin?: boolean; pollMs?: number } = {},
): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-admin-'));
  const dbPath = join(dir, 'tasks.db');
  const store = new SqliteTaskStore(dbPath);
  const app = createTaskServer({
    store,
    auth: { tokens: { [CALLER]: 'alice' } },
    ...(options.admin === false
      ? {}
      : {
          admin: {
            tokens: { [ADMIN]: { name: 'ops', canAnswer: true }, [VIEWER]: 'viewer' },
            pollMs: options.pollMs ?? 100,
          },
        }),
    runtime: { leaseMs: 600 },
  });
  const gate = gates();
  const aborted = new Set<string>();
  registerTools(app, gate, aborted);
  const runs: Runs = new Map();
  registerAskingTools(app, runs);
  const info = await app.listen(0, '127.0.0.1');
  return {
    base: `http://127.0.0.1:${info.port}`,
    app,
    store,
    dbPath,
    create: (tool, args = {}, principal = 'alice') =>
      app.runtime.createTask({ tool, arguments: args, principal }),
    open: (key) => gate.open(key),
    aborted,
    runs,
    async close() {
      await app.close(1000);
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function bearer(token: string | undefined): Record<string, string> {
  return token === undefined ? {} : { authorization: `Bearer ${token}` };
}

/** GET/POST with an optional bearer token; resolves with status and parsed JSON (or text). */
export async function call(
  base: string,
  path: string,
  token?: string,
  init: { method?: string; body?: unknown } = {},
): Promise<{ status: number; body: Loose }> {
  const response = await fetch(`${base}${path}`, {
    method: init.method ?? 'GET',
    headers: { ...bearer(token), 'content-type': 'application/json' },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON (metrics, HTML)
  }
  return { status: response.status, body };
}

export interface SseFrame {
  event: string;
  data: Loose;
}

/** Follows the dashboard's event stream the way the page does (fetch + Authorization). */
export async function followEvents(base: string, token: string) {
  const controller = new AbortController();
  const response = await fetch(`${base}/dashboard/api/events`, {
    headers: bearer(token),
    signal: controller.signal,
  });
  const frames: SseFrame[] = [];
  const done = (async () => {
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    try {
      for (;;) {
        const { done: end, value } = await reader.read();
        if (end) return;
        buffer += value;
        const parts = buffer.split('\n\n');
        buffer = parts.pop() ?? '';
        for (const part of parts) {
          const event = /^event: (.*)$/m.exec(part)?.[1];
          const data = /^data: (.*)$/m.exec(part)?.[1];
          if (event !== undefined && data !== undefined)
            frames.push({ event, data: JSON.parse(data) });
        }
      }
    } catch {
      // aborted
    }
  })();
  return {
    status: response.status,
    frames,
    async close() {
      controller.abort();
      await done;
    },
  };
}
