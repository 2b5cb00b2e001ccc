import assert from 'node:assert/strict';
import type { DefineCase } from './harness.js';

export function registerExpiryCases(define: DefineCase): void {
  define('a task is invisible from its expiresAt on, before any sweep', async (h) => {
    const task = await h.create({ ttlMs: 1000 });
    h.clock.advance(999);
    assert.deepEqual(await h.store.get(task.id), task);
    h.clock.advance(1);
    assert.equal(await h.store.get(task.id), undefined);
    assert.deepEqual((await h.store.list({})).tasks, []);
    assert.deepEqual(await h.store.findRunnable(10), []);
    assert.equal(await h.store.claim(task.id, 'w', 1000), undefined);
  });

  define('a task without a ttl never expires', async (h) => {
    const task = await h.create({ ttlMs: null });
    h.clock.advance(10 * 365 * 24 * 3_600_000);
    assert.deepEqual(await h.store.get(task.id), task);
    assert.deepEqual(await h.store.sweepExpired(10), []);
  });

  define('sweepExpired deletes only expired tasks, in bounded batches', async (h) => {
    const expired = [];
    for (let i = 0; i < 5; i++) expired.push((await h.create({ ttlMs: 1000 + i })).id);
    const forever = await h.create({ ttlMs: null });
    const later = await h.create({ ttlMs: 60_000 });
    h.clock.advance(2000);
    const swept = [...(await h.store.sweepExpired(2)), ...(await h.store.sweepExpired(2))];
    assert.equal(swept.length, 4);
    const rest = await h.store.sweepExpired(10);
    assert.equal(rest.length, 1);
    assert.deepEqual([...swept, ...rest].sort(), [...expired].sort());
    assert.deepEqual(await h.store.sweepExpired(10), []);
    assert.deepEqual(await h.store.get(forever.id), forever);
    assert.deepEqual(await h.store.get(later.id), later);
  });

  define('sweeping deletes the steps and the lease with the task', async (h) => {
    const task = await h.create({ ttlMs: 1000 });
    await h.store.saveStep(task.id, 'download', { bytes: 10 });
    assert.ok(await h.store.claim(task.id, 'worker-1', 10 * 3_600_000));
    h.clock.advance(1000);
    assert.deepEqual(await h.store.sweepExpired(10), [task.id]);
    // A task stored again under the same id inherits nothing from the swept one.
    const again = { ...h.record(), id: task.id };
    assert.equal((await h.store.create(again)).created, true);
    assert.deepEqual(await h.store.loadSteps(task.id), {});
    const grant = await h.store.claim(task.id, 'worker-2', 1000);
    assert.equal(grant?.interrupted, false, 'no lease survived the sweep');
  });
}
