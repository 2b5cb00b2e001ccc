import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { assertRunPolicy } from '../../src/runtime/run-policy.js';
import { TaskRuntime } from '../../src/runtime/runtime.js';
import type { RunnableTool, TaskSettings, ToolHandler } from '../../src/runtime/tool.js';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';
import { isRpcError } from '../../src/task/errors.js';
import type { TaskRecord } from '../../src/task/record.js';
import { waitFor } from '../helpers/wait.js';

const silent = { info() {}, warn() {}, error() {} };
const text = (value: string) => ({ content: [{ type: 'text', text: value }] });
const runtimes: TaskRuntime[] = [];
afterEach(async () => {
  for (const runtime of runtimes.splice(0)) await runtime.stop(200);
});

/** Handlers that run until the test lets them go; `started` lists runs in start order. */
class Gates {
  readonly started: string[] = [];
  readonly #open = new Map<string, () => void>();
  handler(label: (args: Record<string, unknown>) => string): ToolHandler {
    return async (args, ctx) => {
      const name = label(args);
      this.started.push(name);
      await new Promise<void>((resolve) => {
        this.#open.set(name, resolve);
        ctx.signal.addEventListener('abort', () => resolve());
      });
      return text(name);
    };
  }
  release(name: string): void {
    const open = this.#open.get(name);
    assert.ok(open, `${name} is not running`);
    open();
  }
}

function setup(tools: RunnableTool[], slots = 8) {
  const store = new MemoryTaskStore();
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const runtime = new TaskRuntime({
    store,
    tools: { get: (name) => byName.get(name) },
    concurrency: slots,
    leaseMs: 1000,
    logger: silent,
  });
  runtimes.push(runtime);
  const create = (tool: string, args: Record<string, unknown> = {}, principal = 'alice') =>
    runtime.createTask({ tool, arguments: args, principal });
  const status = (task: TaskRecord, wanted: string) =>
    waitFor(`task ${task.id} ${wanted}`, async () => {
      const current = await store.get(task.id);
      return current?.status === wanted ? current : undefined;
    });
  return { runtime, store, create, status };
}

const tool = (name: string, task: Partial<TaskSettings>, handler: ToolHandler): RunnableTool => ({
  name,
  task: { mode: 'optional', ...task },
  handler,
});

describe('concurrency option', () => {
  it('is checked at registration, with what to write instead', () => {
    const check = (concurrency: unknown) => () =>
      assertRunPolicy('render', { mode: 'optional', concurrency } as TaskSettings);
    assert.throws(check({ limit: 0 }), /task\.concurrency\.limit must be a positive integer/);
    assert.throws(check({ limit: 1.5 }), /concurrency\.limit must be a positive integer/);
    assert.throws(
      check({ limit: 2, key: 'account' }),
      /concurrency\.key must be 'tool', 'principal' or a function/,
    );
    assert.throws(check({ limit: 2, max: 3 }), /concurrency\.max is not an option/);
    assert.throws(check(3), /concurrency must be \{ limit, key\? \}/);
    assert.doesNotThrow(check({ limit: 2, key: 'principal' }));
    assert.doesNotThrow(check({ limit: 2, key: () => 'k' }));
  });

  it('a key function that throws or returns no string fails the create; nothing is stored', async () => {
    const t = setup([
      tool(
        'throws',
        {
          concurrency: {
            limit: 1,
            key: () => {
              throw new Error('no account');
            },
          },
        },
        () => text('x'),
      ),
      tool('number', { concurrency: { limit: 1, key: (() => 7) as never } }, () => text('x')),
    ]);
    for (const [name, pattern] of [
      ['throws', /concurrency\.key threw: no account/],
      ['number', /concurrency\.key must return a non-empty string .* got 7/],
    ] as const) {
      await assert.rejects(t.create(name), (error: unknown) => {
        assert.ok(isRpcError(error));
        assert.equal(error.code, -32602);
        assert.match(error.message, pattern);
        return true;
      });
    }
    assert.deepEqual((await t.store.list({})).tasks, []);
  });

  it('waiters say so, hold no slot, and start in creation order as permits free', async () => {
    const gates = new Gates();
    const t = setup(
      [
        tool(
          'render',
          { concurrency: { limit: 1, key: (args) => `render:${String(args['account'])}` } },
          gates.handler((args) => `render-${String(args['n'])}`),
        ),
        tool('quick', {}, () => text('quick')),
      ],
      2,
    );
    const first = await t.create('render', { account: 'acct-7', n: 1 });
    await waitFor('render-1 to start', () => gates.started.includes('render-1'));
    const waiting = (task: TaskRecord) =>
      waitFor(`${task.id} to wait`, async () => {
        const current = await t.store.get(task.id);
        const message = 'waiting for a concurrency slot: key render:acct-7 (limit 1)';
        return current?.statusMessage === message;
      });
    // Created one after the other (ids within one millisecond sort in no set order).
    const second = await t.create('render', { account: 'acct-7', n: 2 });
    await waiting(second);
    const third = await t.create('render', { account: 'acct-7', n: 3 });
    await waiting(third);
    const other = await t.create('render', { account: 'acct-9', n: 9 });
    await waitFor('render-9 to start', () => gates.started.includes('render-9'));
    gates.release('render-9');
    await t.status(other, 'completed');
    // Both slots were busy; a waiter holds none, so another tool runs.
    assert.equal((await t.status(await t.create('quick'), 'completed')).status, 'completed');
    assert.deepEqual(gates.started, ['render-1', 'render-9']);
    gates.release('render-1');
    await t.status(first, 'completed');
    await waitFor('render-2 to start', () => gates.started.includes('render-2'));
    assert.equal((await t.store.get(second.id))?.statusMessage, undefined, 'the message went');
    assert.ok(!gates.started.includes('render-3'), 'still one at a time');
    gates.release('render-2');
    await waitFor('render-3 to start', () => gates.started.includes('render-3'));
    gates.release('render-3');
    await t.status(third, 'completed');
    assert.deepEqual(gates.started, ['render-1', 'render-9', 'render-2', 'render-3']);
  });

  it('gives the permit back on a time-out at once, a cancel and a question to the client', async () => {
    const gates = new Gates();
    let asked = 0;
    const t = setup([
      tool(
        'limited',
        { timeoutMs: 150, retry: false, concurrency: { limit: 1, key: () => 'shared' } },
        async () => {
          await new Promise((resolve) => setTimeout(resolve, 3000)); // ignores its signal
          return text('late');
        },
      ),
      tool('asker', { concurrency: { limit: 1, key: () => 'shared' } }, async (_args, ctx) => {
        asked += 1;
        await ctx.input({
          ok: {
            method: 'elicitation/create',
            params: { message: 'ok?', requestedSchema: { type: 'object', properties: {} } },
          },
        });
        return text('answered');
      }),
      tool(
        'gated',
        { concurrency: { limit: 1, key: () => 'shared' } },
        gates.handler((args) => String(args['n'])),
      ),
    ]);
    const timedOut = await t.create('limited');
    const afterTimeout = await t.create('gated', { n: 'after-timeout' });
    await waitFor('after-timeout to start', () => gates.started.includes('after-timeout'));
    assert.equal((await t.status(timedOut, 'failed')).status, 'failed');
    const afterCancel = await t.create('gated', { n: 'after-cancel' });
    await t.runtime.cancelTask(afterTimeout.id, 'alice');
    await waitFor('after-cancel to start', () => gates.started.includes('after-cancel'));
    gates.release('after-cancel');
    await t.status(afterCancel, 'completed');
    const parked = await t.create('asker');
    await t.status(parked, 'input_required');
    const afterPark = await t.create('gated', { n: 'after-park' });
    await waitFor('after-park to start', () => gates.started.includes('after-park'));
    gates.release('after-park');
    await t.status(afterPark, 'completed');
    assert.equal(asked, 1);
  });
});
