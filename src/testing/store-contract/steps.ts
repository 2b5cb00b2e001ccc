import assert from 'node:assert/strict';
import { report } from '../../task/transitions.js';
import type { DefineCase } from './harness.js';

export function registerStepCases(define: DefineCase): void {
  define('steps round-trip JSON values, per task, last write wins', async (h) => {
    const a = await h.create();
    const b = await h.create();
    assert.deepEqual(await h.store.loadSteps(a.id), {});
    await h.store.saveStep(a.id, 'fetch', { rows: [1, 2], note: 'ü ✓', ok: true, none: null });
    await h.store.saveStep(a.id, 'count', 42);
    await h.store.saveStep(a.id, 'label', 'text');
    await h.store.saveStep(b.id, 'fetch', ['other']);
    await h.store.saveStep(a.id, 'count', 43);
    assert.deepEqual(await h.store.loadSteps(a.id), {
      fetch: { rows: [1, 2], note: 'ü ✓', ok: true, none: null },
      count: 43,
      label: 'text',
    });
    assert.deepEqual(await h.store.loadSteps(b.id), { fetch: ['other'] });
  });

  define('a claim to run returns, if it reads them, what get and loadSteps would', async (h) => {
    const task = await h.create();
    await h.store.saveStep(task.id, 'fetch', { rows: [1] });
    const progressed = await h.store.compareAndSet(report(task, 'half way', h.clock.now()), 1);
    assert.ok(progressed.ok);
    const grant = await h.store.claim(task.id, 'worker-1', 5000, { load: true });
    assert.ok(grant);
    assert.equal(grant.interrupted, false);
    assert.equal(await h.store.claim(task.id, 'worker-2', 5000, { load: true }), undefined);
    if (grant.loaded === undefined) return; // this store leaves the reads to the runner
    assert.deepEqual(grant.loaded.task, await h.store.get(task.id));
    assert.equal(grant.loaded.task.statusMessage, 'half way');
    assert.deepEqual(grant.loaded.steps, { fetch: { rows: [1] } });
  });

  define('steps of unknown tasks are refused on save and empty on load', async (h) => {
    await assert.rejects(h.store.saveStep('no-such-task', 'x', 1));
    assert.deepEqual(await h.store.loadSteps('no-such-task'), {});
  });
}
