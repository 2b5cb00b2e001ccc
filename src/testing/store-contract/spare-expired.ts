import assert from 'node:assert/strict';
import { complete } from '../../task/transitions.js';
import type { DefineCase } from './harness.js';

/**
 * `ClaimOptions.spareExpired`: after an outage of the store, a claim gives an expired lease's
 * holder time to renew instead of taking it as lost; the holder's token still holds.
 */
export function registerSpareExpiredCases(define: DefineCase): void {
  define(
    'a claim that spares expired leases leaves one still on record to its holder',
    async (h) => {
      const task = await h.create();
      const grant = await h.store.claim(task.id, 'holder', 1000);
      assert.ok(grant);
      h.clock.advance(1000);
      const peer = await h.peer();
      assert.equal(await peer.claim(task.id, 'other', 60_000, { spareExpired: true }), undefined);
      assert.equal((await h.store.renewLease(task.id, grant.token, 60_000)).held, true);
      assert.equal(await peer.claim(task.id, 'other', 60_000), undefined, 'renewed: live again');
      const done = complete(task, { content: [] }, h.clock.now());
      const written = await h.store.compareAndSet(done, task.revision, { leaseToken: grant.token });
      assert.equal(written.ok, true, "the holder's outcome lands");
    },
  );

  define('sparing refuses an abandoned lease but not a task nobody holds', async (h) => {
    const abandoned = await h.create();
    const grant = await h.store.claim(abandoned.id, 'holder', 60_000);
    assert.ok(grant);
    await h.store.releaseLease(abandoned.id, grant.token, { abandoned: true });
    const spare = { spareExpired: true };
    assert.equal(await h.store.claim(abandoned.id, 'other', 60_000, spare), undefined);
    const free = await h.create();
    assert.equal((await h.store.claim(free.id, 'other', 60_000, spare))?.interrupted, false);
    const waited = await h.create();
    const waiting = await h.store.claim(waited.id, 'holder', 60_000);
    assert.ok(waiting);
    assert.ok(await h.store.releaseUntil(waited.id, waiting.token, 500));
    h.clock.advance(500);
    assert.equal((await h.store.claim(waited.id, 'other', 60_000, spare))?.interrupted, false);
    const taken = await h.store.claim(abandoned.id, 'other', 60_000);
    assert.equal(taken?.interrupted, true, 'without sparing, the expired lease is taken');
  });

  define('sparing still takes the lease of the holder named as gone', async (h) => {
    const task = await h.create();
    assert.ok(await h.store.claim(task.id, 'gone', 1000));
    h.clock.advance(1000);
    const options = { spareExpired: true, takeOverFrom: 'gone' };
    assert.equal((await h.store.claim(task.id, 'me', 60_000, options))?.interrupted, true);
  });
}
