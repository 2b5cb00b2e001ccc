import assert from 'node:assert/strict';
import type { PermitAsk } from '../../store/port.js';
import { complete, report } from '../../task/transitions.js';
import type { DefineCase, Harness } from './harness.js';

const ASK: PermitAsk = { key: 'k', limit: 1 };

/** A task created with its lease and `ask` in the same write. */
async function createdWithPermit(h: Harness, ask: PermitAsk = ASK) {
  const outcome = await h.store.create(h.record(), {
    lease: { owner: 'creator', leaseMs: 5000, permit: ask },
  });
  h.clock.advance(1); // distinct creation times: waiters are served in creation order
  assert.ok(outcome.lease);
  return { task: outcome.task, lease: outcome.lease };
}

/** A task created, then claimed asking for `ask` in the claim. */
async function claimedWithPermit(h: Harness, ask: PermitAsk = ASK) {
  const task = await h.create();
  h.clock.advance(1);
  const lease = await h.store.claim(task.id, 'worker-1', 5000, { permit: ask });
  assert.ok(lease);
  return { task, lease };
}

/**
 * A permit taken in the write that takes the lease, and given back in the write that ends it:
 * a keyed task costs no permit write of its own.
 */
export function registerFoldedPermitCases(define: DefineCase): void {
  define(
    'a create that leases its task takes the permit asked for in the same write',
    async (h) => {
      const holder = await createdWithPermit(h);
      assert.deepEqual(holder.lease.permit, { granted: true, wake: [] });
      const waiter = await createdWithPermit(h);
      assert.deepEqual(waiter.lease.permit, { granted: false, wake: [] }, 'over the limit');
      const renewal = await h.store.renewLease(waiter.task.id, waiter.lease.token, 5000);
      assert.equal(renewal.held, true, 'a refused ask keeps its lease');
      const other = await createdWithPermit(h, { key: 'other', limit: 1 });
      assert.equal(other.lease.permit?.granted, true, 'another key');
      const peer = await h.peer();
      const wake = await peer.releasePermit('k', 1, holder.task.id, holder.lease.token);
      assert.deepEqual(wake, [waiter.task.id], 'the refused task waits for the permit');
    },
  );

  define('a claim takes the permit asked for under its new lease', async (h) => {
    const holder = await claimedWithPermit(h);
    assert.deepEqual(holder.lease.permit, { granted: true, wake: [] });
    const waiter = await claimedWithPermit(h);
    assert.equal(waiter.lease.permit?.granted, false);
    const held = await h.create();
    assert.ok(await h.store.claim(held.id, 'worker-1', 5000));
    const refused = await h.store.claim(held.id, 'worker-2', 5000, { permit: ASK });
    assert.equal(refused, undefined, 'no claim, no permit');
    const request = { ...ASK, taskId: holder.task.id, token: holder.lease.token };
    const again = await h.store.acquirePermit({ ...request, createdAt: holder.task.createdAt });
    assert.equal(again.granted, true, 'the permit is held under the claimed lease');
    const wake = await h.store.releasePermit('k', 1, holder.task.id, holder.lease.token);
    assert.deepEqual(wake, [waiter.task.id]);
  });

  define('an outcome fenced with the permit gives it back and names the waiters', async (h) => {
    const holder = await claimedWithPermit(h);
    const waiter = await createdWithPermit(h);
    assert.equal(waiter.lease.permit?.granted, false);
    const fence = { leaseToken: holder.lease.token, permit: ASK };
    const progress = report(holder.task, 'half way', h.clock.now());
    const kept = await h.store.compareAndSet(progress, holder.task.revision, fence);
    assert.ok(kept.ok);
    assert.equal(kept.wake, undefined, 'a write that keeps the task working keeps the permit');
    const later = await claimedWithPermit(h);
    assert.equal(later.lease.permit?.granted, false, 'still held');
    const done = complete(kept.task, { content: [] }, h.clock.now());
    const finished = await h.store.compareAndSet(done, kept.task.revision, fence);
    assert.ok(finished.ok);
    assert.deepEqual(finished.wake, [waiter.task.id], 'the oldest waiter that fits');
    const request = { ...ASK, taskId: waiter.task.id, token: waiter.lease.token };
    const taken = await h.store.acquirePermit({ ...request, createdAt: waiter.task.createdAt });
    assert.equal(taken.granted, true);
  });
}
