import assert from 'node:assert/strict';
import { answerInput, cancel, complete, report, requestInput } from '../../task/transitions.js';
import type { TaskRecord } from '../../task/record.js';
import type { DefineCase, Harness } from './harness.js';

async function write(h: Harness, next: TaskRecord): Promise<TaskRecord> {
  const outcome = await h.store.compareAndSet(next, next.revision - 1);
  assert.ok(outcome.ok);
  return outcome.task;
}

const QUESTION = { method: 'elicitation/create', params: { message: 'Go on?' } };

export function registerLeaseCases(define: DefineCase): void {
  define('claim grants a lease on a working task', async (h) => {
    const task = await h.create();
    const grant = await h.store.claim(task.id, 'worker-1', 5000);
    assert.ok(grant);
    assert.equal(typeof grant.token, 'string');
    assert.ok(grant.token.length >= 16);
    assert.equal(grant.expiresAt, h.clock.now() + 5000);
    assert.equal(grant.interrupted, false);
  });

  define('a held lease cannot be claimed, even by racing claimers', async (h) => {
    const peer = await h.peer();
    for (let round = 0; round < h.raceRounds; round++) {
      const task = await h.create();
      const grants = await Promise.all(
        [0, 1, 2, 3, 4].map((i) => (i % 2 ? peer : h.store).claim(task.id, `w${i}`, 5000)),
      );
      assert.equal(grants.filter(Boolean).length, 1, `round ${round}: one claim wins`);
      assert.equal(await h.store.claim(task.id, 'late', 5000), undefined);
    }
  });

  define('an expired lease is taken over and marked interrupted', async (h) => {
    const task = await h.create();
    const first = await h.store.claim(task.id, 'worker-1', 1000);
    assert.ok(first);
    h.clock.advance(999);
    assert.equal(await h.store.claim(task.id, 'worker-2', 1000), undefined);
    h.clock.advance(1);
    const second = await h.store.claim(task.id, 'worker-2', 1000);
    assert.ok(second);
    assert.equal(second.interrupted, true);
    assert.notEqual(second.token, first.token);
    assert.deepEqual(await h.store.renewLease(task.id, first.token, 1000), {
      held: false,
      status: 'working',
    });
    assert.equal((await h.store.renewLease(task.id, second.token, 1000)).held, true);
  });

  define('renewLease extends a held lease and reports the status', async (h) => {
    const task = await h.create();
    const grant = await h.store.claim(task.id, 'worker-1', 1000);
    assert.ok(grant);
    h.clock.advance(500);
    assert.deepEqual(await h.store.renewLease(task.id, grant.token, 1000), {
      held: true,
      status: 'working',
    });
    h.clock.advance(700); // past the first expiry, inside the renewed one
    assert.equal(await h.store.claim(task.id, 'worker-2', 1000), undefined);
    h.clock.advance(300);
    assert.equal((await h.store.claim(task.id, 'worker-2', 1000))?.interrupted, true);
    assert.deepEqual(await h.store.renewLease('no-such-task', grant.token, 1000), {
      held: false,
      status: undefined,
    });
  });

  define('releaseLease removes only the holder’s lease', async (h) => {
    const task = await h.create();
    const grant = await h.store.claim(task.id, 'worker-1', 5000);
    assert.ok(grant);
    await h.store.releaseLease(task.id, 'someone-else');
    assert.equal(await h.store.claim(task.id, 'worker-2', 5000), undefined);
    await h.store.releaseLease(task.id, grant.token);
    assert.equal((await h.store.renewLease(task.id, grant.token, 5000)).held, false);
    const next = await h.store.claim(task.id, 'worker-2', 5000);
    assert.equal(next?.interrupted, false, 'a released lease is not an interruption');
  });

  define('claim refuses tasks that are not working, unknown or expired', async (h) => {
    const parked = requestInput(await h.create(), { q: QUESTION }, h.clock.now());
    await write(h, parked);
    const done = await write(h, complete(await h.create(), { content: [] }, h.clock.now()));
    const expiring = await h.create({ ttlMs: 10 });
    h.clock.advance(10);
    for (const id of [parked.id, done.id, expiring.id, 'no-such-task']) {
      assert.equal(await h.store.claim(id, 'worker', 5000), undefined, id);
    }
  });

  define('parking or finishing a task drops its lease', async (h) => {
    let task = await h.create();
    const grant = await h.store.claim(task.id, 'worker-1', 60_000);
    assert.ok(grant);
    task = await write(h, requestInput(task, { q: QUESTION }, h.clock.now()));
    assert.deepEqual(await h.store.renewLease(task.id, grant.token, 60_000), {
      held: false,
      status: 'input_required',
    });
    task = await write(h, answerInput(task, { q: { action: 'accept' } }, h.clock.now()).task);
    assert.deepEqual(await h.store.findRunnable(10), [task.id]);
    const resumed = await h.store.claim(task.id, 'worker-2', 60_000);
    assert.ok(resumed);
    assert.equal(resumed.interrupted, false);
    await write(h, complete(task, { content: [] }, h.clock.now()));
    assert.deepEqual(await h.store.renewLease(task.id, resumed.token, 60_000), {
      held: false,
      status: 'completed',
    });
  });

  define('a write that keeps the task working keeps its lease', async (h) => {
    const task = await h.create();
    const grant = await h.store.claim(task.id, 'worker-1', 60_000);
    assert.ok(grant);
    await write(h, report(task, 'progress', h.clock.now()));
    assert.equal(await h.store.claim(task.id, 'worker-2', 60_000), undefined);
    assert.equal((await h.store.renewLease(task.id, grant.token, 60_000)).held, true);
  });

  define('a holder renewing after a cancellation learns of it', async (h) => {
    const task = await h.create();
    const grant = await h.store.claim(task.id, 'worker-1', 60_000);
    assert.ok(grant);
    const other = await h.peer();
    assert.equal((await other.compareAndSet(cancel(task, h.clock.now()), task.revision)).ok, true);
    assert.deepEqual(await h.store.renewLease(task.id, grant.token, 60_000), {
      held: false,
      status: 'cancelled',
    });
  });

  define('findRunnable lists working tasks nobody holds', async (h) => {
    const free = await h.create();
    h.clock.advance(1);
    const held = await h.create();
    h.clock.advance(1);
    const abandoned = await h.create();
    h.clock.advance(1);
    const parked = await h.create();
    const done = await h.create();
    const expiring = await h.create({ ttlMs: 1000 });
    assert.ok(await h.store.claim(held.id, 'w', 60_000));
    assert.ok(await h.store.claim(abandoned.id, 'w', 500));
    await write(h, requestInput(parked, { q: QUESTION }, h.clock.now()));
    await write(h, complete(done, { content: [] }, h.clock.now()));
    h.clock.advance(1000);
    const runnable = await h.store.findRunnable(10);
    assert.deepEqual([...runnable].sort(), [free.id, abandoned.id].sort());
    assert.equal((await h.store.findRunnable(1)).length, 1);
    assert.ok(expiring);
  });

  define('an abandoned lease is runnable at once and its next claim is interrupted', async (h) => {
    const task = await h.create();
    const first = await h.store.claim(task.id, 'worker-1', 60_000);
    assert.ok(first);
    await h.store.releaseLease(task.id, 'not-the-token', { abandoned: true });
    assert.deepEqual(await h.store.findRunnable(10), [], 'a wrong token abandons nothing');
    await h.store.releaseLease(task.id, first.token, { abandoned: true });
    assert.deepEqual(await h.store.findRunnable(10), [task.id]);
    const second = await h.store.claim(task.id, 'worker-2', 60_000);
    assert.ok(second, 'no need to wait out the lease');
    assert.equal(second.interrupted, true);
    const third = await h.store.claim(task.id, 'worker-3', 60_000);
    assert.equal(third, undefined, 'the new lease is live');
    await h.store.releaseLease(task.id, second.token);
    const fourth = await h.store.claim(task.id, 'worker-3', 60_000);
    assert.equal(fourth?.interrupted, false, 'a plain release leaves no trace');
  });

  define('releasing a lease that already ran out keeps the interruption on record', async (h) => {
    const task = await h.create();
    const first = await h.store.claim(task.id, 'worker-1', 1000);
    assert.ok(first);
    h.clock.advance(1000);
    // A plain release, but the lease ran out first: nobody knows that run ended cleanly.
    await h.store.releaseLease(task.id, first.token);
    assert.deepEqual(await h.store.findRunnable(10), [task.id]);
    const second = await h.store.claim(task.id, 'worker-2', 1000);
    assert.equal(second?.interrupted, true, 'the next claim counts the lost run');
  });

  define('a re-claim after a lost lease is an interruption whatever the loser does', async (h) => {
    const task = await h.create();
    const first = await h.store.claim(task.id, 'worker-1', 1000);
    assert.ok(first);
    h.clock.advance(1000);
    const second = await h.store.claim(task.id, 'worker-2', 1000);
    assert.equal(second?.interrupted, true);
    // The cut-off holder comes back and lets go: its token no longer holds anything.
    await h.store.releaseLease(task.id, first.token);
    await h.store.releaseLease(task.id, first.token, { abandoned: true });
    assert.equal(await h.store.claim(task.id, 'worker-3', 1000), undefined, 'still held');
    h.clock.advance(1000);
    await h.store.releaseLease(task.id, second?.token ?? '');
    assert.equal((await h.store.claim(task.id, 'worker-3', 1000))?.interrupted, true);
  });
}
