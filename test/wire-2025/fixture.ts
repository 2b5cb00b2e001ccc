import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as z from 'zod/v4';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { createTaskServer, type TaskServer, type TaskServerOptions } from '../../src/server/app.js';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import { RPC, RpcError } from '../../src/task/errors.js';

const silent = { info() {}, warn() {}, error() {} };

/** A gate a tool waits on, opened by the test: no fixed sleeps. */
export class Gates {
  readonly #open = new Map<string, () => void>();
  readonly #waits = new Map<string, Promise<void>>();
  readonly #opened = new Set<string>();

  wait(name: string, signal: AbortSignal): Promise<void> {
    let promise = this.#waits.get(name);
    if (promise === undefined) {
      promise = new Promise<void>((resolve) => this.#open.set(name, resolve));
      this.#waits.set(name, promise);
    }
    return new Promise((resolve, reject) => {
      signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
      void promise.then(resolve);
    });
  }

  isOpen(name: string): boolean {
    return this.#opened.has(name);
  }

  open(name: string): void {
    this.#opened.add(name);
    if (!this.#waits.has(name)) this.#waits.set(name, Promise.resolve());
    this.#open.get(name)?.();
  }
}

const text = (value: string) => ({ content: [{ type: 'text', text: value }] });

export interface Running {
  app: TaskServer;
  url: string;
  gates: Gates;
  close(): Promise<void>;
}

/** A real taskrail server on SQLite at 127.0.0.1 with a few tools covering every outcome. */
export async function startServer(options: Partial<TaskServerOptions> = {}): Promise<Running> {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-wire-2025-'));
  const store = new SqliteTaskStore(join(dir, 'tasks.db'));
  const app = createTaskServer({ store, logger: silent, ...options });
  const gates = new Gates();
  const fast = { pollIntervalMs: 50 };
  const Gate = z.object({ gate: z.string() });
  app.tool(
    'greet',
    { description: 'Says hello', inputSchema: z.object({ name: z.string() }) },
    (args) => text(`Hello, ${String(args['name'])}!`),
  );
  app.tool(
    'wait_gate',
    { description: 'Waits for a gate', inputSchema: Gate, task: { mode: 'optional', ...fast } },
    async (args, ctx) => {
      await ctx.progress(`waiting for ${String(args['gate'])}`);
      await gates.wait(String(args['gate']), ctx.signal);
      return text(`gate ${String(args['gate'])} opened`);
    },
  );
  app.tool(
    'long_report',
    {
      description: 'A required task',
      inputSchema: Gate,
      task: { mode: 'required', ...fast },
      modelImmediateResponse: 'The report is being built.',
    },
    async (args, ctx) => {
      await gates.wait(String(args['gate']), ctx.signal);
      return text('report done');
    },
  );
  app.tool(
    'ticker',
    {
      description: 'Reports progress until its gate opens',
      inputSchema: Gate,
      task: { mode: 'optional', ...fast },
    },
    async (args, ctx) => {
      for (let tick = 1; !gates.isOpen(String(args['gate'])); tick++) {
        await ctx.progress(`tick ${tick}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
        ctx.signal.throwIfAborted();
      }
      return text('ticked');
    },
  );
  app.tool('tool_error', { description: 'isError', task: { mode: 'required', ...fast } }, () => ({
    ...text('the data set was empty'),
    isError: true,
  }));
  app.tool('rpc_error', { description: 'fails', task: { mode: 'required', ...fast } }, () => {
    throw new RpcError(RPC.INTERNAL_ERROR, 'Upstream rejected the job');
  });
  app.tool(
    'confirm',
    { description: 'asks', task: { mode: 'required', ...fast } },
    async (_args, ctx) => {
      const answer = await ctx.elicit('ok', {
        message: 'Proceed?',
        requestedSchema: {
          type: 'object',
          properties: { ok: { type: 'boolean' } },
          required: ['ok'],
        },
      });
      return text(
        answer.action === 'accept' && answer.content?.['ok'] === true ? 'confirmed' : 'declined',
      );
    },
  );
  const info = await app.listen(0, '127.0.0.1');
  return {
    app,
    url: info.url,
    gates,
    async close() {
      await app.close(1000);
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface Client2025Options {
  tasks?: boolean;
  bearer?: string;
  elicit?: (message: string) => ElicitResult | Promise<ElicitResult>;
}

/** The official SDK 1.x client on the 2025-11-25 session wire. */
export async function client2025(url: string, options: Client2025Options = {}): Promise<Client> {
  const tasks = options.tasks ?? true;
  const client = new Client(
    { name: 'sdk-v1-test', version: '1.0.0' },
    {
      capabilities: {
        elicitation: { form: {} },
        ...(tasks
          ? { tasks: { list: {}, cancel: {}, requests: { elicitation: { create: {} } } } }
          : {}),
      },
    },
  );
  const elicit = options.elicit;
  if (elicit !== undefined) {
    client.setRequestHandler(ElicitRequestSchema, async (request) =>
      elicit(request.params.message),
    );
  }
  const headers: Record<string, string> =
    options.bearer === undefined ? {} : { authorization: `Bearer ${options.bearer}` };
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }),
  );
  return client;
}
