import { createTaskServer, type TaskServer } from '../../src/server/index.js';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import type { TaskStore } from '../../src/store/port.js';
import { tempDir } from '../client/support.js';

/** A gate a tool waits on until the test opens it. */
export class Gates {
  readonly #open = new Map<string, () => void>();
  readonly #waiting = new Map<string, Promise<void>>();

  wait(name: string): Promise<void> {
    let promise = this.#waiting.get(name);
    if (promise === undefined) {
      promise = new Promise<void>((resolve) => this.#open.set(name, resolve));
      this.#waiting.set(name, promise);
    }
    return promise;
  }

  open(name: string): void {
    void this.wait(name);
    this.#open.get(name)?.();
  }
}

export interface InlineServer {
  app: TaskServer;
  url: string;
  store: TaskStore;
  gates: Gates;
  /** How many times each tool's handler started. */
  runs: Map<string, number>;
  close(): Promise<void>;
}

const silent = { info() {}, warn() {}, error() {} };

/**
 * Tools for the host-without-tasks paths, on a real SQLite file: `structured` answers at once
 * with text and structuredContent, `gated` reports progress and waits for its gate, `asks`
 * asks one question.
 */
export async function startInlineServer(options: {
  fallbackTools: boolean;
  inlineWaitMs: number;
}): Promise<InlineServer> {
  const dir = tempDir('inline');
  const store = new SqliteTaskStore(`${dir.path}/tasks.db`);
  const gates = new Gates();
  const runs = new Map<string, number>();
  const count = (name: string): void => void runs.set(name, (runs.get(name) ?? 0) + 1);
  const app = createTaskServer({ store, logger: silent, ...options });
  app.tool('structured', { description: 'answers at once', task: true }, async () => {
    count('structured');
    return {
      content: [{ type: 'text', text: 'Report: all good' }],
      structuredContent: { topic: 'health', verdict: 'good' },
    };
  });
  app.tool(
    'gated',
    { description: 'waits for its gate', task: { mode: 'optional', pollIntervalMs: 50 } },
    async (args, ctx) => {
      count('gated');
      const gate = String(args['gate']);
      await ctx.progress('step one');
      await gates.wait(`${gate}:1`);
      await ctx.progress('step two');
      await gates.wait(gate);
      return { content: [{ type: 'text', text: `gate ${gate} passed` }] };
    },
  );
  app.tool(
    'asks',
    { description: 'asks one question', task: { mode: 'optional', pollIntervalMs: 50 } },
    async (_args, ctx) => {
      count('asks');
      const answer = await ctx.elicit('confirm', {
        message: 'Delete notes.txt?',
        requestedSchema: {
          type: 'object',
          properties: { ok: { type: 'boolean' } },
          required: ['ok'],
        },
      });
      return { content: [{ type: 'text', text: `answer: ${answer.action}` }] };
    },
  );
  const { url } = await app.listen(0, '127.0.0.1');
  return {
    app,
    url,
    store,
    gates,
    runs,
    async close() {
      await app.close(500);
      await store.close();
      dir.remove();
    },
  };
}
