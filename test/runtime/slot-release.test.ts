import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { LocalExecutor } from '../../src/runtime/local-executor.js';
import { TaskRuntime } from '../../src/runtime/runtime.js';
import type { TaskStore, WriteFence } from '../../src/store/port.js';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import type { TaskRecord } from '../../src/task/record.js';
import { isTerminal } from '../../src/task/status.js';
import { waitFor } from '../helpers/wait.js';
import { TestTools, text } from './tools.js';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => undefined as void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

describe('LocalExecutor: a slot is free once the handler returns', () => {
  it('starts the next task while the last one writes its outcome, and stop waits for both', async () => {
    const executor = new LocalExecutor({ concurrency: 1 });
    const started: string[] = [];
    const outcomes = new Map([
      ['a', deferred()],
      ['b', deferred()],
    ]);
    executor.start(async (taskId) => {
      started.push(taskId);
      executor.handlerDone(taskId); // the handler returned at once
      await outcomes.get(taskId)?.promise; // its outcome is being written
    });
    await executor.dispatch('a');
    await executor.dispatch('b');
    await waitFor('b to start while a writes its outcome', () => started.includes('b'));

    let stopped = false;
    const stopping = executor.stop(10_000).then(() => (stopped = true));
    outcomes.get('a')?.resolve();
    await Promise.resolve();
    assert.equal(stopped, false, 'b still writes its outcome');
    outcomes.get('b')?.resolve();
    await stopping;
  });

  it('lets at most concurrency runs finish past their slot', async () => {
    const executor = new LocalExecutor({ concurrency: 1 });
    const started: string[] = [];
    const outcome = deferred();
    executor.start(async (taskId) => {
      started.push(taskId);
      executor.handlerDone(taskId);
      await outcome.promise;
    });
    for (const id of ['a', 'b', 'c']) await executor.dispatch(id);
    await waitFor('b to start while a writes its outcome', () => started.includes('b'));
    // b's handler is done too, but a is still finishing: b keeps its slot, so c waits.
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(started, ['a', 'b']);
    outcome.resolve();
    await waitFor('c to start once the outcomes are written', () => started.includes('c'));
    await executor.stop(1000);
  });

  it('still runs no more handlers at once than its concurrency', async () => {
    const executor = new LocalExecutor({ concurrency: 2 });
    let running = 0;
    let most = 0;
    const finished: string[] = [];
    executor.start(async (taskId) => {
      running += 1;
      most = Math.max(most, running);
      await new Promise((resolve) => setImmediate(resolve));
      running -= 1;
      executor.handlerDone(taskId);
      await new Promise((resolve) => setImmediate(resolve));
      finished.push(taskId);
    });
    for (const id of ['1', '2', '3', '4', '5', '6']) await executor.dispatch(id);
    await waitFor('every task to finish', () => finished.length === 6);
    assert.equal(most, 2);
    await executor.stop(1000);
  });
});

/** A real SQLite store whose terminal writes wait until `release` is called. */
function holdingTerminalWrites(store: SqliteTaskStore) {
  const gate = deferred();
  const held: string[] = [];
  const wrapped = new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key) as unknown;
      // The store's methods use private fields: they must run on the store itself.
      if (key !== 'compareAndSet') return typeof value === 'function' ? value.bind(target) : value;
      return async (next: TaskRecord, expected: number, fence?: WriteFence) => {
        if (isTerminal(next.status)) {
          held.push(next.id);
          await gate.promise;
        }
        return target.compareAndSet(next, expected, fence);
      };
    },
  }) as TaskStore;
  return { store: wrapped, held, release: gate.resolve };
}

describe('TaskRuntime frees the slot before the outcome is committed', () => {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-slot-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('runs the next queued task while a slow store still writes the last outcome', async () => {
    const sqlite = new SqliteTaskStore(join(dir, 'slots.db'));
    const { store, held, release } = holdingTerminalWrites(sqlite);
    const tools = new TestTools().add('quick', async () => text('done'));
    const runtime = new TaskRuntime({ store, tools, logger: quiet, concurrency: 1 });
    runtime.start();
    try {
      const input = { tool: 'quick', arguments: {}, principal: 'alice' };
      const [a, b] = [await runtime.createTask(input), await runtime.createTask(input)];
      await waitFor('both handlers to run', () => tools.calls.get('quick') === 2);
      assert.deepEqual(held.sort(), [a.id, b.id].sort(), 'both outcomes were still unwritten');
      release();
      for (const task of [a, b]) {
        const done = await waitFor('the outcome', async () => {
          const current = await runtime.getTask(task.id, 'alice');
          return current?.status === 'completed' ? current : undefined;
        });
        assert.deepEqual(done.result, text('done'));
      }
    } finally {
      release();
      await runtime.stop(1000);
      await sqlite.close();
    }
  });
});
