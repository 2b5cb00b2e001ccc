import assert from 'node:assert/strict';
import { report } from '../../task/transitions.js';
import type { DefineCase } from './harness.js';

/** `releaseUntil`: a durable wait (a retry's backoff, a sleep), judged on the store's clock. */
export function registerWaitCases(define: DefineCase): void {
  define(
    'releaseUntil hides the task from claim and findRunnable until its wake time',
    async (h) => {
      const task = await h.create();
      const grant = await h.store.claim(task.id, 'worker-1', 5000);
      assert.ok(grant);
      const wakeAt = await h.store.releaseUntil(task.id, grant.token, 3000);
      assert.equal(wakeAt, h.clock.now() + 3000);
      assert.deepEqual(await h.store.findRunnable(10), []);
      assert.deepEqual(await h.store.findLeased(10), [], 'nobody holds a waiting task');
      assert.equal(await h.store.claim(task.id, 'worker-2', 5000), undefined);
      assert.equal(await (await h.peer()).claim(task.id, 'worker-2', 5000), undefined);
      h.clock.advance(2999);
      assert.equal(await h.store.claim(task.id, 'worker-2', 5000), undefined, 'one ms early');
      h.clock.advance(1);
      assert.deepEqual(await h.store.findRunnable(10), [task.id]);
      const next = await h.store.claim(task.id, 'worker-2', 5000);
      assert.ok(next);
      assert.equal(next.interrupted, false, 'a wait is not an interruption');
      assert.equal((await h.store.get(task.id))?.status, 'working');
    },
  );

  define('releaseUntil needs the holder’s token; the old token is dead afterwards', async (h) => {
    const task = await h.create();
    const grant = await h.store.claim(task.id, 'worker-1', 5000);
    assert.ok(grant);
    assert.equal(await h.store.releaseUntil(task.id, 'someone-else', 1000), undefined);
    assert.equal(await h.store.claim(task.id, 'worker-2', 5000), undefined, 'still held');
    assert.ok(await h.store.releaseUntil(task.id, grant.token, 1000));
    assert.equal(await h.store.releaseUntil(task.id, grant.token, 1000), undefined);
    assert.equal((await h.store.renewLease(task.id, grant.token, 5000)).held, false);
    await h.store.releaseLease(task.id, grant.token);
    assert.equal(await h.store.claim(task.id, 'worker-2', 5000), undefined, 'the wait stays');
  });

  define(
    'a write under the lease keeps the wait that follows it; takeover cannot skip it',
    async (h) => {
      const task = await h.create();
      const grant = await h.store.claim(task.id, 'worker-1', 5000);
      assert.ok(grant);
      const stored = await h.store.get(task.id);
      assert.ok(stored);
      const written = await h.store.compareAndSet(
        report(stored, 'attempt 2 of 3 soon', h.clock.now()),
        stored.revision,
      );
      assert.ok(written.ok);
      assert.ok(await h.store.releaseUntil(task.id, grant.token, 2000));
      const takeOver = { takeOverFrom: 'worker-1' };
      assert.equal(await h.store.claim(task.id, 'worker-2', 5000, takeOver), undefined);
      h.clock.advance(2000);
      const next = await h.store.claim(task.id, 'worker-2', 5000, { load: true });
      assert.ok(next);
      assert.equal(next.interrupted, false);
      const loaded = next.loaded?.task ?? (await h.store.get(task.id));
      assert.equal(loaded?.statusMessage, 'attempt 2 of 3 soon');
    },
  );

  define(
    'a lease that ran out is not turned into a wait: the next claim is an interruption',
    async (h) => {
      const task = await h.create();
      const grant = await h.store.claim(task.id, 'worker-1', 1000);
      assert.ok(grant);
      h.clock.advance(1000);
      assert.equal(await h.store.releaseUntil(task.id, grant.token, 5000), undefined);
      assert.equal((await h.store.claim(task.id, 'worker-2', 1000))?.interrupted, true);
    },
  );
}
