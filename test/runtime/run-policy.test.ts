import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { TaskRuntime } from '../../src/runtime/runtime.js';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import { RpcError, RPC } from '../../src/task/errors.js';
import type { TaskRecord } from '../../src/task/record.js';
import { isTerminal } from '../../src/task/status.js';
import type { RunnableTool } from '../../src/runtime/tool.js';
import { parseJournal, policyTools, POLICY } from '../fixtures/policy-tools.js';
import { waitFor } from '../helpers/wait.js';

const silent = { info() {}, warn() {}, error() {} };

function setup(extra: RunnableTool[] = []) {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-policy-'));
  const journal = join(dir, 'journal.log');
  const store = new SqliteTaskStore(join(dir, 'tasks.db'));
  const tools = new Map([...policyTools(journal), ...extra].map((tool) => [tool.name, tool]));
  const runtime = new TaskRuntime({
    store,
    tools: { get: (name) => tools.get(name) },
    concurrency: 1,
    leaseMs: 2000,
    logger: silent,
  });
  const events = () => parseJournal(existsSync(journal) ? readFileSync(journal, 'utf8') : '');
  const create = (tool: string) =>
    runtime.createTask({ tool, arguments: {}, principal: 'policy-test' });
  const ended = (id: string) =>
    waitFor(
      `task ${id} to end`,
      async () => {
        const task = await store.get(id);
        return task !== undefined && isTerminal(task.status) ? task : undefined;
      },
      { timeoutMs: 30_000 },
    );
  const close = async () => {
    await runtime.stop(100);
    await store.close();
  };
  return { runtime, store, events, create, ended, close };
}

describe('run policy in one process (SQLite, concurrency 1)', () => {
  it('a time-out frees the slot although the handler ignores its signal, and discards its later writes', async () => {
    const t = setup();
    try {
      const hang = await t.create('hang');
      await waitFor('hang to start', () => t.events().some((e) => e.event === 'hang-start'));
      const quick = await t.create('quick_note');
      const quickDone = await t.ended(quick.id);
      assert.equal(quickDone.status, 'completed');
      const events = t.events();
      assert.ok(
        !events.some((e) => e.event.startsWith('hang-end')),
        'the second task ran while the first handler still ran',
      );
      const failed = await t.ended(hang.id);
      assert.equal(failed.status, 'failed');
      assert.equal(failed.error?.code, RPC.INTERNAL_ERROR);
      assert.match(failed.error?.message ?? '', /timed out/);
      await waitFor('the ignored handler to return', () =>
        t.events().some((e) => e.event === 'hang-end-aborted-true'),
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      const after = await t.store.get(hang.id);
      assert.deepEqual(after, failed, 'nothing the handler did after its limit was written');
      assert.deepEqual(await t.store.loadSteps(hang.id), {});
      assert.equal(t.events().filter((e) => e.event === 'late-step').length, 0);
      assert.equal(
        t.events().filter((e) => e.event === 'hang-start').length,
        1,
        'retry: false runs once',
      );
    } finally {
      await t.close();
    }
  });

  it('retries a throwing tool with backoff, finished steps once, gaps at least the policy’s', async () => {
    const t = setup();
    try {
      const task = await t.create('flaky');
      const statuses = new Set<string>();
      const off = t.store.events.on('task:updated', ({ task: written }: { task: TaskRecord }) => {
        if (written.id === task.id && written.statusMessage) statuses.add(written.statusMessage);
      });
      const done = await t.ended(task.id);
      off();
      assert.equal(done.status, 'completed');
      assert.equal(done.attempt, 3);
      const mine = t.events().filter((e) => e.taskId === task.id);
      assert.equal(mine.filter((e) => e.event === 'flaky-first-step').length, 1);
      const attempts = mine.filter((e) => e.event.startsWith('flaky-attempt-'));
      assert.deepEqual(
        attempts.map((e) => e.event),
        ['flaky-attempt-1', 'flaky-attempt-2', 'flaky-attempt-3'],
      );
      const [a1, a2, a3] = attempts.map((e) => e.at) as [number, number, number];
      process.stdout.write(`# backoff gaps: ${a2 - a1} ms, ${a3 - a2} ms\n`);
      assert.ok(a2 - a1 >= POLICY.backoffMs, `first gap ${a2 - a1} ms`);
      assert.ok(a3 - a2 >= POLICY.backoffMs * POLICY.backoffFactor, `second gap ${a3 - a2} ms`);
      assert.ok(
        [...statuses].some((m) => /^attempt 2 of 3 at \d\d:\d\d:\d\dZ after: /.test(m)),
        [...statuses].join(' | '),
      );
    } finally {
      await t.close();
    }
  });

  it('a retry: false tool that throws runs once; the default policy fails a throw at once', async () => {
    const t = setup();
    try {
      const once = await t.ended((await t.create('throw_once')).id);
      const plain = await t.ended((await t.create('throw_default')).id);
      assert.equal(once.status, 'failed');
      assert.equal(plain.status, 'failed');
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(t.events().filter((e) => e.event === 'throw-once').length, 1);
      assert.equal(t.events().filter((e) => e.event === 'throw-default').length, 1);
    } finally {
      await t.close();
    }
  });

  it('an RpcError is final even with onError retries', async () => {
    let runs = 0;
    const t = setup([
      {
        name: 'refuses',
        task: { mode: 'optional', retry: { onError: true, backoffMs: 10 } },
        handler: () => {
          runs += 1;
          throw new RpcError(RPC.INVALID_PARAMS, 'no such account');
        },
      },
    ]);
    try {
      const done = await t.ended((await t.create('refuses')).id);
      assert.equal(done.error?.code, RPC.INVALID_PARAMS);
      assert.equal(runs, 1);
    } finally {
      await t.close();
    }
  });

  it('ctx.sleep waits durably without a slot and resumes with steps replayed', async () => {
    const t = setup();
    try {
      const task = await t.create('nap');
      const sleeping = await waitFor('the task to sleep', async () => {
        const current = await t.store.get(task.id);
        return current?.statusMessage?.startsWith('sleeping until ') ? current : undefined;
      });
      assert.equal(sleeping.status, 'working');
      // The slot is free while it sleeps: another task runs at once.
      const quick = await t.ended((await t.create('quick_note')).id);
      assert.equal(quick.status, 'completed');
      const done = await t.ended(task.id);
      assert.equal(done.status, 'completed');
      assert.equal(done.attempt, 1, 'a sleep is not an attempt');
      const mine = t.events().filter((e) => e.taskId === task.id);
      assert.equal(mine.filter((e) => e.event === 'nap-before-step').length, 1);
      const firstRun = mine.find((e) => e.event === 'nap-run')?.at ?? 0;
      const after = mine.find((e) => e.event === 'nap-after')?.at ?? 0;
      assert.ok(after - firstRun >= POLICY.napMs, `woke after ${after - firstRun} ms`);
      assert.ok(quick.updatedAt < after, 'the other task finished during the sleep');
    } finally {
      await t.close();
    }
  });
});
