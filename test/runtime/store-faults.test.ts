import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ProtocolError } from '@modelcontextprotocol/server';
import Database from 'better-sqlite3';
import { TaskRuntime } from '../../src/runtime/runtime.js';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import { TaskrailError } from '../../src/task/errors.js';
import type { TaskRecord } from '../../src/task/record.js';
import { isTerminal } from '../../src/task/status.js';
import { waitFor } from '../helpers/wait.js';
import { TestTools, text } from './tools.js';

/** Another connection (as another process would have) holding the file's write lock. */
function holdWriteLock(path: string): () => void {
  const other = new Database(path);
  other.exec('BEGIN IMMEDIATE');
  return () => {
    other.exec('COMMIT');
    other.close();
  };
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const lines: string[] = [];
const logger = {
  info: (m: string) => lines.push(`info ${m}`),
  warn: (m: string) => lines.push(`warn ${m}`),
  error: (m: string) => lines.push(`error ${m}`),
};

describe('store trouble during a run (SQLite write lock held by another connection)', () => {
  let dir: string;
  const runtimes: TaskRuntime[] = [];
  const stray: unknown[] = [];
  const onStray = (reason: unknown) => stray.push(reason);

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'taskrail-faults-'));
    process.on('unhandledRejection', onStray);
  });
  after(() => {
    process.off('unhandledRejection', onStray);
    rmSync(dir, { recursive: true, force: true });
  });
  afterEach(async () => {
    for (const runtime of runtimes.splice(0)) {
      await runtime.stop(1000);
      await runtime.store.close();
    }
    lines.length = 0;
    stray.length = 0;
  });

  let counter = 0;
  function setup(tools: TestTools, leaseMs = 600) {
    counter += 1;
    const path = join(dir, `tasks-${counter}.db`);
    // A short lock budget, so the store gives up (STORE_UNAVAILABLE) while the lock is held.
    const store = new SqliteTaskStore(path, { busyTimeoutMs: 20 });
    const runtime = new TaskRuntime({ store, tools, logger, leaseMs });
    runtimes.push(runtime);
    return { path, runtime };
  }

  async function settled(runtime: TaskRuntime, task: TaskRecord): Promise<TaskRecord> {
    return waitFor(
      `task ${task.id} to end`,
      async () => {
        const current = await runtime.getTask(task.id, 'alice');
        return current !== undefined && isTerminal(current.status) ? current : undefined;
      },
      { timeoutMs: 20_000 },
    );
  }

  it('progress writes that hit the lock neither fail the task nor reject unhandled', async () => {
    const started = deferred();
    const lockTaken = deferred();
    const tools = new TestTools().add('reporter', async (_args, ctx) => {
      started.resolve();
      await lockTaken.promise;
      for (let i = 1; i <= 25; i += 1) {
        await ctx.progress({ progress: i, total: 25, message: `item ${i}` });
        await sleep(20);
      }
      return text('reported');
    });
    // A lease that outlives the lock: the run keeps its lease (see the self-fencing case below).
    const { path, runtime } = setup(tools, 3000);
    const task = await runtime.createTask({ tool: 'reporter', arguments: {}, principal: 'alice' });
    await started.promise;
    const release = holdWriteLock(path);
    lockTaken.resolve();
    await sleep(700); // the lock outlives many throttled progress writes
    release();
    const done = await settled(runtime, task);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    assert.deepEqual(done.result, text('reported'));
    assert.equal(tools.calls.get('reporter'), 1, 'ran once');
    assert.deepEqual(stray, [], 'no unhandled rejection');
    const outageLines = lines.filter((line) => line.includes('task store unavailable'));
    assert.equal(outageLines.length, 1, `one warning for the outage: ${lines.join(' | ')}`);
  });

  it('a retry:false handler that returns while the lock is held is recorded completed, once', async () => {
    // A lock shorter than the lease: the outcome write waits it out.
    const lockTaken = deferred();
    const started = deferred();
    const tools = new TestTools().add(
      'charge',
      async () => {
        started.resolve();
        await lockTaken.promise;
        return text('charged');
      },
      { mode: 'optional', retry: false },
    );
    const { path, runtime } = setup(tools, 3000);
    const task = await runtime.createTask({ tool: 'charge', arguments: {}, principal: 'alice' });
    await started.promise;
    const release = holdWriteLock(path);
    lockTaken.resolve();
    await waitFor('the outcome write to hit the lock', () =>
      lines.some((line) => line.includes('task store unavailable')),
    );
    release();
    const done = await settled(runtime, task);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    assert.deepEqual(done.result, text('charged'));
    assert.equal(tools.calls.get('charge'), 1, 'never run twice');
    assert.deepEqual(stray, []);
  });

  it('a lock that outlasts the lease: the outcome in hand is kept, the retry:false task completes, never runs twice', async () => {
    const lockTaken = deferred();
    const started = deferred();
    const tools = new TestTools().add(
      'charge',
      async () => {
        started.resolve();
        await lockTaken.promise;
        return text('charged');
      },
      { mode: 'optional', retry: false },
    );
    const { path, runtime } = setup(tools);
    const task = await runtime.createTask({ tool: 'charge', arguments: {}, principal: 'alice' });
    await started.promise;
    const release = holdWriteLock(path);
    lockTaken.resolve();
    // Reads pass the lock: the task shows up as runnable once its lease ran out.
    await waitFor('the lease to run out under the lock', async () =>
      (await runtime.store.findRunnable(10)).includes(task.id),
    );
    await runtime.recoverNow(); // the process never claims the task it is finishing
    release();
    const done = await settled(runtime, task);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    assert.deepEqual(done.result, text('charged'));
    assert.equal(done.attempt, 1);
    assert.equal(tools.calls.get('charge'), 1, 'never run twice');
    assert.deepEqual(stray, []);
  });

  it('a store failure thrown out of a handler is not the tool failing: the task is re-run', async () => {
    const tools = new TestTools().add('flaky_store', (_args, ctx) => {
      if (ctx.attempt === 1) {
        throw new TaskrailError('STORE_UNAVAILABLE', 'the task store is unreachable; retry later');
      }
      return text(`attempt ${ctx.attempt}`);
    });
    const { runtime } = setup(tools);
    const task = await runtime.createTask({
      tool: 'flaky_store',
      arguments: {},
      principal: 'alice',
    });
    const done = await waitFor('the re-run to finish', async () => {
      await runtime.recoverNow();
      const current = await runtime.getTask(task.id, 'alice');
      return current !== undefined && isTerminal(current.status) ? current : undefined;
    });
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    assert.deepEqual(done.result, text('attempt 2'));
    assert.equal(done.attempt, 2, 'the hand-back counts as an interruption');
    assert.equal(tools.calls.get('flaky_store'), 2);
  });

  it("a tool's SDK ProtocolError keeps its code and message", async () => {
    const tools = new TestTools().add('refuses', () => {
      throw new ProtocolError(-32602, 'quantity must be positive');
    });
    const { runtime } = setup(tools);
    const task = await runtime.createTask({ tool: 'refuses', arguments: {}, principal: 'alice' });
    const done = await settled(runtime, task);
    assert.equal(done.status, 'failed');
    assert.deepEqual(done.error, { code: -32602, message: 'quantity must be positive' });
  });
});
