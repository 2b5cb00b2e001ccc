/**
 * The run-policy scenarios every store passes with real processes: a runner process (a worker,
 * or a runtime on SQLite) with ONE execution slot, killed with SIGKILL during durable waits and
 * replaced. Handler runs are counted, and attempt gaps measured, from the journal the fixture
 * tools write (`<event> <taskId> <pid> <epoch ms>`). Gaps are lower bounds (correctness: the
 * wait was kept), never speed assertions.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { it } from 'node:test';
import type { TaskRecord } from '../../src/task/record.js';
import { isTerminal } from '../../src/task/status.js';
import { parseJournal, POLICY, type JournalEntry } from '../fixtures/policy-tools.js';
import type { Child } from './child.js';
import { waitFor } from './wait.js';

export interface PolicyHarness {
  journal: string;
  /** Creates a task of `tool` (no arguments unless given); resolves its id. */
  create(tool: string, args?: Record<string, unknown>): Promise<string>;
  get(id: string): Promise<TaskRecord | undefined>;
  /** Ids of the tasks someone holds a live lease on. */
  leased(): Promise<string[]>;
  /** Starts a runner process with one slot (or `slots`); resolves once it takes work. */
  startRunner(slots?: number): Promise<Child>;
  pickupMs: number;
}

export function registerPolicyScenarios(h: () => PolicyHarness): void {
  let runner: Child | undefined;
  const events = (): JournalEntry[] =>
    parseJournal(existsSync(h().journal) ? readFileSync(h().journal, 'utf8') : '');
  const mine = (id: string) => events().filter((e) => e.taskId === id);
  const ended = (id: string) =>
    waitFor(
      `task ${id} to end`,
      async () => {
        const task = await h().get(id);
        return task !== undefined && isTerminal(task.status) ? task : undefined;
      },
      { timeoutMs: h().pickupMs },
    );
  // Waiting: its status says so, and nobody holds it any more (the wait is set).
  const waitingWith = (id: string, pattern: RegExp) =>
    waitFor(
      `task ${id} to wait (${pattern})`,
      async () => {
        const task = await h().get(id);
        if (task?.status !== 'working' || !pattern.test(task.statusMessage ?? '')) return undefined;
        const leased = await h().leased();
        return leased.includes(id) ? undefined : task;
      },
      { timeoutMs: h().pickupMs },
    );
  const replaceRunner = async () => {
    await runner?.kill('SIGKILL');
    const killed = runner?.process.pid;
    const started = Date.now();
    runner = await h().startRunner();
    process.stdout.write(`# the replacement runner took ${Date.now() - started} ms to start\n`);
    return killed;
  };

  it('a time-out frees the only slot although the handler ignores its signal', async () => {
    runner ??= await h().startRunner();
    const hang = await h().create('hang');
    await waitFor('hang to start', () => mine(hang).some((e) => e.event === 'hang-start'), {
      timeoutMs: h().pickupMs,
    });
    const quick = await h().create('quick_note');
    assert.equal((await ended(quick)).status, 'completed');
    assert.ok(
      !mine(hang).some((e) => e.event.startsWith('hang-end')),
      'the second task ran while the first handler still ran',
    );
    const failed = await ended(hang);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.error?.code, -32603);
    assert.match(failed.error?.message ?? '', /timed out/);
    await waitFor(
      'the ignored handler to return',
      () => mine(hang).some((e) => e.event === 'hang-end-aborted-true'),
      { timeoutMs: POLICY.hangMs * 3 },
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal((await h().get(hang))?.revision, failed.revision, 'nothing written later');
    assert.equal(mine(hang).filter((e) => e.event === 'hang-start').length, 1);
    assert.equal(mine(hang).filter((e) => e.event === 'late-step').length, 0);
  });

  it('retries with backoff; the wait survives kill -9; finished steps run once', async () => {
    runner ??= await h().startRunner();
    const id = await h().create('flaky');
    await waitingWith(id, /^attempt 2 of 3 at \d\d:\d\d:\d\dZ after: /);
    const killed = await replaceRunner();
    const done = await ended(id);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    assert.equal(done.attempt, 3, 'a crash during the wait is not an attempt');
    const attempts = mine(id).filter((e) => e.event.startsWith('flaky-attempt-'));
    assert.deepEqual(
      attempts.map((e) => e.event),
      ['flaky-attempt-1', 'flaky-attempt-2', 'flaky-attempt-3'],
    );
    assert.equal(mine(id).filter((e) => e.event === 'flaky-first-step').length, 1);
    assert.notEqual(attempts[1]?.pid, killed, 'the replacement ran attempt 2');
    const [a1, a2, a3] = attempts.map((e) => e.at) as [number, number, number];
    process.stdout.write(`# backoff gaps across a kill -9: ${a2 - a1} ms, ${a3 - a2} ms\n`);
    assert.ok(a2 - a1 >= POLICY.backoffMs, `first gap ${a2 - a1} ms`);
    assert.ok(a3 - a2 >= POLICY.backoffMs * POLICY.backoffFactor, `second gap ${a3 - a2} ms`);
  });

  it('a retry: false tool that throws runs once', async () => {
    runner ??= await h().startRunner();
    const id = await h().create('throw_once');
    const done = await ended(id);
    assert.equal(done.status, 'failed');
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(mine(id).filter((e) => e.event === 'throw-once').length, 1);
  });

  it('ctx.sleep survives kill -9 and resumes at its wake time with steps replayed', async () => {
    runner ??= await h().startRunner();
    const id = await h().create('nap');
    await waitingWith(id, /^sleeping until /);
    const killed = await replaceRunner();
    const done = await ended(id);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    assert.equal(done.attempt, 1, 'a sleep is not an attempt');
    assert.equal(mine(id).filter((e) => e.event === 'nap-before-step').length, 1);
    const slept = mine(id).find((e) => e.event === 'nap-run');
    const woke = mine(id).find((e) => e.event === 'nap-after');
    assert.ok(slept && woke);
    assert.notEqual(woke.pid, killed);
    process.stdout.write(`# slept ${woke.at - slept.at} ms of ${POLICY.napMs} across a kill -9\n`);
    assert.ok(woke.at - slept.at >= POLICY.napMs, `woke after ${woke.at - slept.at} ms`);
  });

  it('(stops the runner)', async () => {
    await runner?.kill('SIGTERM');
    runner = undefined;
  });
}
