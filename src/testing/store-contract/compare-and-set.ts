import assert from 'node:assert/strict';
import type { TaskStore } from '../../store/port.js';
import type { TaskRecord } from '../../task/record.js';
import { cancel, complete, fail, report } from '../../task/transitions.js';
import type { DefineCase, Harness } from './harness.js';
import { RPC } from '../../task/errors.js';

/** Builds one contender's next version of `task`: a status change or a progress report. */
const CONTENDERS: ReadonlyArray<(task: TaskRecord, now: number) => TaskRecord> = [
  (task, now) => complete(task, { content: [{ type: 'text', text: 'won' }] }, now),
  (task, now) => cancel(task, now),
  (task, now) => fail(task, { code: RPC.INTERNAL_ERROR, message: 'lost the race' }, now),
  (task, now) => report(task, 'still going', now),
];

async function race(h: Harness, stores: TaskStore[], writers: number): Promise<void> {
  for (let round = 0; round < h.raceRounds; round++) {
    const task = await h.create();
    const nexts = Array.from({ length: writers }, (_, i) =>
      (CONTENDERS[i % CONTENDERS.length] as (t: TaskRecord, n: number) => TaskRecord)(
        task,
        h.clock.now() + i,
      ),
    );
    const outcomes = await Promise.all(
      nexts.map((next, i) =>
        (stores[i % stores.length] as TaskStore).compareAndSet(next, task.revision),
      ),
    );
    const winners = outcomes.flatMap((outcome, i) => (outcome.ok ? [nexts[i]] : []));
    assert.equal(winners.length, 1, `round ${round}: exactly one writer wins`);
    assert.deepEqual(
      await h.store.get(task.id),
      winners[0],
      `round ${round}: the winner is stored`,
    );
    for (const outcome of outcomes) {
      if (!outcome.ok) assert.deepEqual(outcome.current, winners[0], 'losers see the winner');
    }
  }
}

export function registerCompareAndSetCases(define: DefineCase): void {
  define('a write with the current revision succeeds and is stored', async (h) => {
    const task = await h.create();
    const next = report(task, 'working on it', h.clock.advance(10));
    const outcome = await h.store.compareAndSet(next, task.revision);
    assert.deepEqual(outcome, { ok: true, task: next });
    assert.equal((await h.store.get(task.id))?.revision, task.revision + 1);
  });

  define('a write with a stale revision loses and reports the current task', async (h) => {
    const task = await h.create();
    const first = report(task, 'first', h.clock.advance(1));
    assert.equal((await h.store.compareAndSet(first, task.revision)).ok, true);
    const stale = report(task, 'stale', h.clock.advance(1));
    const outcome = await h.store.compareAndSet(stale, task.revision);
    assert.deepEqual(outcome, { ok: false, current: first });
    assert.deepEqual(await h.store.get(task.id), first);
  });

  define('a terminal task is never overwritten, even with its own revision', async (h) => {
    const finishers = [
      (t: TaskRecord) => complete(t, { content: [] }, h.clock.now()),
      (t: TaskRecord) => fail(t, { code: 1, message: 'x' }, h.clock.now()),
      (t: TaskRecord) => cancel(t, h.clock.now()),
    ];
    for (const finish of finishers) {
      const done = finish(await h.create());
      assert.equal((await h.store.compareAndSet(done, done.revision - 1)).ok, true);
      const revived: TaskRecord = { ...done, status: 'working', revision: done.revision + 1 };
      const outcome = await h.store.compareAndSet(revived, done.revision);
      assert.deepEqual(outcome, { ok: false, current: done }, `${done.status} stays`);
      assert.deepEqual(await h.store.get(done.id), done);
    }
  });

  define('a write cannot change the fields fixed at creation', async (h) => {
    const task = await h.create({ idempotencyKey: 'fixed' });
    const next = report(task, 'moved', h.clock.advance(1));
    const forged: TaskRecord = {
      ...next,
      principal: 'mallory',
      tool: 'other',
      arguments: { forged: true },
      createdAt: task.createdAt + 5,
      wire: task.wire === '2025-11-25' ? '2026-07-28' : '2025-11-25',
      idempotencyKey: 'changed',
    };
    const outcome = await h.store.compareAndSet(forged, task.revision);
    assert.deepEqual(outcome, { ok: true, task: next });
    assert.deepEqual(await h.store.get(task.id), next);
  });

  define('next.revision must be expectedRevision + 1', async (h) => {
    const task = await h.create();
    const skipping = { ...report(task, 'x', h.clock.now()), revision: task.revision + 2 };
    await assert.rejects(h.store.compareAndSet(skipping, task.revision));
    assert.deepEqual(await h.store.get(task.id), task);
  });

  define('a write to an unknown or expired task loses with no current task', async (h) => {
    const ghost = h.record();
    const outcome = await h.store.compareAndSet(report(ghost, 'x', h.clock.now()), 1);
    assert.deepEqual(outcome, { ok: false, current: undefined });
    assert.equal(await h.store.get(ghost.id), undefined, 'a lost write creates nothing');
    const expiring = await h.create({ ttlMs: 100 });
    h.clock.advance(100);
    const late = await h.store.compareAndSet(report(expiring, 'late', h.clock.now()), 1);
    assert.deepEqual(late, { ok: false, current: undefined });
  });

  define('two writers racing one transition: exactly one wins', async (h) => {
    await race(h, [h.store, await h.peer()], 2);
  });

  define('eight writers racing one task: exactly one wins', async (h) => {
    await race(h, [h.store, await h.peer()], 8);
  });
}
