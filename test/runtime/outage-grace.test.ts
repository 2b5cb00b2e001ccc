import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { TaskRuntime } from '../../src/runtime/runtime.js';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import { isTerminal } from '../../src/task/status.js';
import { startNode, type Child } from '../helpers/child.js';
import { waitFor } from '../helpers/wait.js';
import { tempDir } from '../stores/temp-dir.js';
import { TestTools, text } from './tools.js';

const here = dirname(fileURLToPath(import.meta.url));
const LEASE_MS = 1500;
const LOCK_MS = 3000;

function capturing() {
  const lines: string[] = [];
  const push = (m: string) => lines.push(m);
  return { lines, logger: { info: push, warn: push, error: push } };
}

/**
 * A third process holds the SQLite write lock longer than the lease: the store is out for
 * everyone. When it comes back, another process that saw the outage gives the lease's live
 * holder a renewal interval to renew before it takes the lease as lost.
 */
describe('after an outage of the store for everyone, a live holder keeps its lease', () => {
  const dir = tempDir('taskrail-outage-grace-');
  const path = join(dir.path, 'tasks.db');
  const journal = join(dir.path, 'starts.log');
  const holderLog = capturing();
  const otherLog = capturing();
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const runtimes: TaskRuntime[] = [];
  let lockHolder: Child | undefined;
  const starts = () => readFileSync(journal, 'utf8').split('\n').filter(Boolean).length;

  function runtime(
    logger: ReturnType<typeof capturing>['logger'],
    busyTimeoutMs: number,
  ): TaskRuntime {
    const tools = new TestTools().add('once', async () => {
      appendFileSync(journal, 'once\n');
      await gate;
      return text('done once');
    });
    const store = new SqliteTaskStore(path, { busyTimeoutMs });
    const made = new TaskRuntime({ store, tools, logger, leaseMs: LEASE_MS });
    runtimes.push(made);
    return made;
  }

  before(() => writeFileSync(journal, ''));
  after(async () => {
    release();
    await lockHolder?.stop(1000);
    for (const made of runtimes) {
      await made.stop(1000);
      await made.store.close();
    }
    dir.remove();
  });

  it('a second process that saw the outage does not take the lease its holder renews', async () => {
    // Short lock budgets: a write that meets the lock fails fast and is retried. The holder's
    // writes do not wait on the lock at all: its next renewal is up to an interval away when
    // the lock goes, the moment the other process looks.
    const holder = runtime(holderLog.logger, 0);
    const other = runtime(otherLog.logger, 100);
    other.start();
    const task = await holder.createTask({ tool: 'once', arguments: {}, principal: 'alice' });
    await waitFor('the handler to start', () => starts() === 1);
    lockHolder = startNode(join(here, '../fixtures/hold-write-lock.js'), [path, String(LOCK_MS)]);
    await lockHolder.line(/^locked$/);
    release(); // the holder has its outcome in hand and keeps renewing through the outage
    // Reads pass the lock: the task shows up as runnable once its lease ran out.
    await waitFor('the lease to run out under the lock', async () =>
      (await other.store.findRunnable(10)).includes(task.id),
    );
    // The other process tries to recover it while the store is locked, and sees the outage.
    await other.recoverNow();
    await waitFor('the other process to see the outage', () =>
      otherLog.lines.some((line) => line.includes('task store unavailable')),
    );
    await lockHolder.line(/^released$/, LOCK_MS + 5000);
    // Its first look once the store answers again: the lease is still expired on record.
    await other.recoverNow();
    const done = await waitFor('the task to end', async () => {
      const current = await holder.getTask(task.id, 'alice');
      return current !== undefined && isTerminal(current.status) ? current : undefined;
    });
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    assert.deepEqual(done.result, text('done once'));
    assert.equal(done.attempt, 1, 'never taken over');
    assert.equal(starts(), 1, 'the tool ran once');
  });
});
