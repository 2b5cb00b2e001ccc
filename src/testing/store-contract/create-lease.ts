import assert from 'node:assert/strict';
import { complete } from '../../task/transitions.js';
import type { DefineCase } from './harness.js';

const LEASE = { owner: 'creator', leaseMs: 1000 };

export function registerCreateLeaseCases(define: DefineCase): void {
  define('create with a lease holds the new task for its creator', async (h) => {
    const { task, created, lease } = await h.store.create(h.record(), { lease: LEASE });
    assert.equal(created, true);
    assert.ok(lease);
    assert.ok(lease.token.length >= 16);
    assert.equal(lease.expiresAt, h.clock.now() + LEASE.leaseMs);
    assert.equal(lease.interrupted, false);
    const peer = await h.peer();
    assert.equal(await peer.claim(task.id, 'other', 1000), undefined);
    assert.deepEqual(await peer.findRunnable(10), []);
    h.clock.advance(500);
    assert.deepEqual(await h.store.renewLease(task.id, lease.token, 1000), {
      held: true,
      status: 'working',
    });
  });

  define('a lease taken at creation counts as a run: its expiry is an interruption', async (h) => {
    const { task, lease } = await h.store.create(h.record(), { lease: LEASE });
    assert.ok(lease);
    h.clock.advance(LEASE.leaseMs);
    assert.deepEqual(await h.store.findRunnable(10), [task.id]);
    const next = await (await h.peer()).claim(task.id, 'other', 1000);
    assert.equal(next?.interrupted, true);
  });

  define('an idempotent repeat gets the earlier task and no lease', async (h) => {
    const record = h.record({ idempotencyKey: 'once' });
    const first = await h.store.create(record, { lease: LEASE });
    assert.ok(first.lease);
    const again = await h.store.create(h.record({ idempotencyKey: 'once' }), { lease: LEASE });
    assert.equal(again.created, false);
    assert.equal(again.lease, undefined);
    assert.equal(again.task.id, record.id);
    assert.equal((await h.store.renewLease(record.id, first.lease.token, 1000)).held, true);
  });

  define('finishing a task leased at creation drops the lease', async (h) => {
    const { task, lease } = await h.store.create(h.record(), { lease: LEASE });
    assert.ok(lease);
    const done = complete(task, { content: [] }, h.clock.now());
    assert.equal((await h.store.compareAndSet(done, task.revision)).ok, true);
    assert.deepEqual(await h.store.renewLease(task.id, lease.token, 1000), {
      held: false,
      status: 'completed',
    });
  });

  define('create refuses a lease of no duration and stores nothing', async (h) => {
    const record = h.record();
    for (const leaseMs of [0, -1, Number.NaN]) {
      await assert.rejects(h.store.create(record, { lease: { owner: 'w', leaseMs } }), /lease/);
    }
    assert.equal(await h.store.get(record.id), undefined);
  });
}
