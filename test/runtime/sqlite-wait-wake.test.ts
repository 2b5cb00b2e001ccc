import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { TaskRuntime } from '../../src/runtime/runtime.js';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import { parseJournal, policyCatalog } from '../fixtures/policy-tools.js';
import { startNode, type Child } from '../helpers/child.js';
import { waitFor } from '../helpers/wait.js';

const CHILD = new URL('../fixtures/policy-child.js', import.meta.url).pathname;
/** The runners' lease, so also how often their recovery scan looks for due waits. */
const LEASE_MS = 15_000;
const NAP_MS = 6000;
/** How late the wake-up may come: a timer and a claim, on a busy machine. */
const LATE_BOUND_MS = 1000;

describe('a durable wait on SQLite after a restart', () => {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-wait-wake-'));
  const db = join(dir, 'tasks.db');
  const journal = join(dir, 'journal.log');
  const store = new SqliteTaskStore(db);
  // Records tasks only; the children run them.
  const recorder = new TaskRuntime({ store, tools: policyCatalog(journal), executor: 'none' });
  const children: Child[] = [];
  const runner = async (): Promise<Child> => {
    const child = startNode(CHILD, [db, journal, String(LEASE_MS)]);
    children.push(child);
    await child.line(/^ready$/);
    return child;
  };
  after(async () => {
    for (const child of children) await child.kill();
    await recorder.stop(0);
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The wake time the store holds for the task (its clock), once the wait is set. */
  function storedWakeAt(taskId: string): number | undefined {
    const file = new Database(db, { readonly: true, fileMustExist: true });
    try {
      const row = file
        .prepare('SELECT lease_owner, lease_expires_at FROM tasks WHERE id = ?')
        .get(taskId) as { lease_owner: string | null; lease_expires_at: number | null };
      return row.lease_owner === '' ? (row.lease_expires_at ?? undefined) : undefined;
    } finally {
      file.close();
    }
  }

  const events = (taskId: string, event: string) =>
    parseJournal(readFileSync(journal, 'utf8')).filter(
      (e) => e.taskId === taskId && e.event === event,
    );

  it('wakes at its time in the new process, not at its next recovery scan', async () => {
    const task = await recorder.createTask({
      tool: 'nap_for',
      arguments: { ms: NAP_MS },
      principal: 'policy',
    });
    // Created before the runner starts: its first recovery scan, at start, finds the task.
    const first = await runner();
    const wakeAt = await waitFor('the wait to be set', () => storedWakeAt(task.id), {
      timeoutMs: 20_000,
    });
    await first.kill('SIGKILL');
    const second = await runner();
    const readyAt = Date.now();
    assert.ok(
      readyAt < wakeAt - 500,
      `the new runner was ready ${readyAt - wakeAt} ms after the wake time: nothing to tell`,
    );
    const woke = await waitFor('the handler to wake', () => events(task.id, 'nap-for-after')[0], {
      timeoutMs: LEASE_MS + 10_000,
      intervalMs: 20,
    });
    const late = woke.at - wakeAt;
    process.stdout.write(`# woke ${late} ms after its wake time, in a process started before it\n`);
    assert.equal(woke.pid, second.process.pid, 'the new process ran it');
    assert.ok(late >= 0, `woke ${-late} ms early`);
    assert.ok(
      late < LATE_BOUND_MS,
      `woke ${late} ms late (a recovery scan comes every ${LEASE_MS} ms)`,
    );
    const done = await waitFor('the task to complete', async () => {
      const record = await store.get(task.id);
      return record?.status === 'completed' ? record : undefined;
    });
    assert.equal(done.attempt, 1, 'a sleep is not an attempt, nor is a kill -9 during it');
  });
});
