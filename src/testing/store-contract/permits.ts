import assert from 'node:assert/strict';
import type { LeaseGrant, PermitRequest, TaskStore } from '../../store/port.js';
import type { TaskRecord } from '../../task/record.js';
import { cancel } from '../../task/transitions.js';
import type { DefineCase, Harness } from './harness.js';

/** A created task claimed by `owner`, and its permit request for `key` under `limit`. */
async function leased(
  h: Harness,
  key: string,
  limit: number,
  leaseMs = 5000,
): Promise<{ task: TaskRecord; grant: LeaseGrant; request: PermitRequest }> {
  const task = await h.create();
  const grant = await h.store.claim(task.id, 'worker-1', leaseMs);
  assert.ok(grant);
  h.clock.advance(1); // distinct creation times: waiters are served in creation order
  const request = { key, limit, taskId: task.id, token: grant.token, createdAt: task.createdAt };
  return { task, grant, request };
}

async function granted(store: TaskStore, request: PermitRequest): Promise<boolean> {
  return (await store.acquirePermit(request)).granted;
}

/** `acquirePermit` / `releasePermit`: concurrency permits held under leases. */
export function registerPermitCases(define: DefineCase): void {
  define('at most limit permits per key; other keys are not affected', async (h) => {
    const [a, b, c] = [await leased(h, 'k', 2), await leased(h, 'k', 2), await leased(h, 'k', 2)];
    const other = await leased(h, 'other', 1);
    assert.equal(await granted(h.store, a.request), true);
    assert.equal(await granted(h.store, b.request), true);
    assert.equal(await granted(h.store, c.request), false, 'the third of limit 2');
    assert.equal(await granted(h.store, other.request), true, 'another key');
    assert.equal(await granted(h.store, a.request), true, 'asking again under the same lease');
    const peer = await h.peer();
    assert.equal(await granted(peer, c.request), false, 'the same answer through another client');
  });

  define('a release frees the permit and names the oldest waiters that fit', async (h) => {
    const holder = await leased(h, 'k', 1);
    const first = await leased(h, 'k', 1);
    const second = await leased(h, 'k', 1);
    assert.equal(await granted(h.store, holder.request), true);
    assert.equal(await granted(h.store, second.request), false);
    assert.equal(await granted(h.store, first.request), false);
    const wake = await h.store.releasePermit('k', 1, holder.task.id, holder.grant.token);
    assert.deepEqual(wake, [first.task.id], 'creation order, not asking order');
    assert.equal(await granted(h.store, second.request), false, 'an older waiter comes first');
    assert.equal(await granted(h.store, first.request), true);
  });

  define('ending the lease ends the permit: an outcome, a wait, a release', async (h) => {
    const holder = await leased(h, 'k', 1);
    const waiter = await leased(h, 'k', 1);
    assert.equal(await granted(h.store, holder.request), true);
    assert.equal(await granted(h.store, waiter.request), false);
    await h.store.releaseLease(holder.task.id, holder.grant.token);
    assert.equal(await granted(h.store, waiter.request), true, 'after a hand-back');
    const sleeper = await leased(h, 'j', 1);
    const next = await leased(h, 'j', 1);
    assert.equal(await granted(h.store, sleeper.request), true);
    assert.ok(await h.store.releaseUntil(sleeper.task.id, sleeper.grant.token, 60_000));
    assert.equal(await granted(h.store, next.request), true, 'after a durable wait');
    const finisher = await leased(h, 'f', 1);
    const after = await leased(h, 'f', 1);
    assert.equal(await granted(h.store, finisher.request), true);
    const stored = await h.store.get(finisher.task.id);
    assert.ok(stored);
    const done = cancel(stored, h.clock.now());
    assert.ok((await h.store.compareAndSet(done, stored.revision)).ok);
    assert.equal(await granted(h.store, after.request), true, 'after a terminal write');
  });

  define("a crashed holder's permit comes back when its lease runs out", async (h) => {
    const holder = await leased(h, 'k', 1, 1000);
    const waiter = await leased(h, 'k', 1, 60_000);
    assert.equal(await granted(h.store, holder.request), true);
    assert.equal(await granted(h.store, waiter.request), false);
    h.clock.advance(997); // both claims took 1 ms each: the holder's lease has 1 ms left
    assert.equal(await granted(h.store, waiter.request), false, 'the lease is still live');
    h.clock.advance(1);
    assert.equal(await granted(h.store, waiter.request), true, 'judged on the store clock');
  });

  define("a renewed lease keeps its permit past the first lease's end", async (h) => {
    const holder = await leased(h, 'k', 1, 1000);
    const waiter = await leased(h, 'k', 1, 60_000);
    assert.equal(await granted(h.store, holder.request), true);
    h.clock.advance(500);
    assert.ok((await h.store.renewLease(holder.task.id, holder.grant.token, 1000)).held);
    h.clock.advance(900); // past the first lease's end, inside the renewed one
    assert.equal(await granted(h.store, waiter.request), false, 'the renewal kept the permit');
    h.clock.advance(100);
    assert.equal(await granted(h.store, waiter.request), true, 'it ends with the renewed lease');
  });

  define(
    'a later task is refused while an older waiter fits, and is told to wake it',
    async (h) => {
      const holder = await leased(h, 'k', 1, 1000);
      const older = await leased(h, 'k', 1, 60_000);
      assert.equal(await granted(h.store, holder.request), true);
      assert.equal(await granted(h.store, older.request), false);
      h.clock.advance(1000); // the holder crashed: its lease ran out, nobody released
      const later = await leased(h, 'k', 1, 60_000);
      const refused = await h.store.acquirePermit(later.request);
      assert.deepEqual(refused, { granted: false, wake: [older.task.id] });
      assert.equal(await granted(h.store, older.request), true);
    },
  );

  define('a refusal can give the lease back in the same write', async (h) => {
    const holder = await leased(h, 'k', 1);
    const waiter = await leased(h, 'k', 1);
    assert.equal(await granted(h.store, holder.request), true);
    const refused = await h.store.acquirePermit({ ...waiter.request, releaseOnRefusal: true });
    assert.equal(refused.granted, false);
    assert.equal((await h.store.renewLease(waiter.task.id, waiter.grant.token, 5000)).held, false);
    const again = await h.store.claim(waiter.task.id, 'worker-2', 5000);
    assert.ok(again, 'claimable at once');
    assert.equal(again.interrupted, false, 'a wait for a permit is no interruption');
  });

  define(
    'a waiter that is no longer working stops counting; a dead token is refused',
    async (h) => {
      const holder = await leased(h, 'k', 2);
      const gone = await leased(h, 'k', 2);
      const late = await leased(h, 'k', 2);
      assert.equal(await granted(h.store, holder.request), true);
      const extra = await leased(h, 'k', 2);
      assert.equal(await granted(h.store, extra.request), true);
      assert.equal(await granted(h.store, gone.request), false);
      assert.equal(await granted(h.store, late.request), false);
      const stored = await h.store.get(gone.task.id);
      assert.ok(stored);
      assert.ok((await h.store.compareAndSet(cancel(stored, h.clock.now()), stored.revision)).ok);
      await h.store.releasePermit('k', 2, extra.task.id, extra.grant.token);
      await h.store.releaseLease(extra.task.id, extra.grant.token);
      assert.equal(await granted(h.store, late.request), true, 'the cancelled waiter is skipped');
      const stale = { ...holder.request, token: 'not-a-lease' };
      assert.equal(await granted(h.store, stale), false);
    },
  );
}
