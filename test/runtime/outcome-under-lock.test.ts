import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { TaskRuntime } from '../../src/runtime/runtime.js';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import type { TaskRecord } from '../../src/task/record.js';
import { isTerminal } from '../../src/task/status.js';
import { startNode, type Child } from '../helpers/child.js';
import { waitFor } from '../helpers/wait.js';
import { tempDir } from '../stores/temp-dir.js';
import { TestTools, text } from './tools.js';

const here = dirname(fileURLToPath(import.meta.url));
const LEASE_MS = 15_000;
const LOCK_MS = 20_000;

/**
 * A handler returns while another process holds the SQLite write lock for longer than the
 * lease (a backup, `sqlite3` at a prompt). Nobody else could claim the task while the store
 * was locked for everyone: the outcome in hand is offered until it lands, the serve's own
 * recovery never claims the task it is finishing, and the tool runs once.
 */
describe('an outcome in hand while another process holds the write lock longer than the lease', () => {
  const dir = tempDir('taskrail-outcome-lock-');
  const path = join(dir.path, 'tasks.db');
  const journal = join(dir.path, 'starts.log');
  const lines: string[] = [];
  const logger = {
    info: (m: string) => lines.push(`info ${m}`),
    warn: (m: string) => lines.push(`warn ${m}`),
    error: (m: string) => lines.push(`error ${m}`),
  };
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let runtime: TaskRuntime;
  let holder: Child | undefined;

  // Each start goes to a file, as a tool with a side effect would leave a trace of each run.
  const started = (name: string) => appendFileSync(journal, `${name}\n`);
  const starts = (name: string) =>
    readFileSync(journal, 'utf8')
      .split('\n')
      .filter((line) => line === name).length;

  before(() => {
    writeFileSync(journal, '');
    const tools = new TestTools()
      .add('retried', async () => {
        started('retried');
        await gate;
        return text('retried done');
      })
      .add(
        'charge',
        async () => {
          started('charge');
          await gate;
          return text('charged');
        },
        { mode: 'optional', retry: false },
      );
    runtime = new TaskRuntime({
      store: new SqliteTaskStore(path),
      tools,
      logger,
      leaseMs: LEASE_MS,
    });
  });
  after(async () => {
    release();
    await holder?.stop(1000);
    await runtime.stop(1000);
    await runtime.store.close();
    dir.remove();
  });

  const terminal = (task: TaskRecord) =>
    waitFor(
      `task ${task.id} to end`,
      async () => {
        const current = await runtime.getTask(task.id, 'alice');
        return current !== undefined && isTerminal(current.status) ? current : undefined;
      },
      { timeoutMs: 20_000 },
    );

  it('a retry:true tool runs once and completes; a retry:false tool that completed ends completed', async () => {
    const retried = await runtime.createTask({
      tool: 'retried',
      arguments: {},
      principal: 'alice',
    });
    const charge = await runtime.createTask({ tool: 'charge', arguments: {}, principal: 'alice' });
    await waitFor('both handlers to start', () => starts('retried') + starts('charge') === 2);
    holder = startNode(join(here, '../fixtures/hold-write-lock.js'), [path, String(LOCK_MS)]);
    await holder.line(/^locked$/);
    release(); // both handlers return while the lock is held: their outcome writes meet it
    await waitFor('an outcome write to meet the lock', () =>
      lines.some((line) => line.includes('task store unavailable')),
    );
    await holder.line(/^released$/, LOCK_MS + 10_000);
    // A recovery scan the moment the lock goes: both leases ran out during the lock.
    await runtime.recoverNow();
    const [doneRetried, doneCharge] = [await terminal(retried), await terminal(charge)];
    assert.equal(doneRetried.status, 'completed', JSON.stringify(doneRetried.error));
    assert.deepEqual(doneRetried.result, text('retried done'));
    assert.equal(doneRetried.attempt, 1, 'never counted as interrupted');
    assert.equal(doneCharge.status, 'completed', JSON.stringify(doneCharge.error));
    assert.deepEqual(doneCharge.result, text('charged'));
    assert.equal(starts('retried'), 1, 'the retry:true tool ran once');
    assert.equal(starts('charge'), 1, 'the retry:false tool ran once');
    assert.ok(
      !lines.some((line) => line.includes('outcome discarded')),
      `no outcome discarded: ${lines.join(' | ')}`,
    );
  });
});
