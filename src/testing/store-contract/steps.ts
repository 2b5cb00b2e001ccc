import assert from 'node:assert/strict';
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

  define('steps of unknown tasks are refused on save and empty on load', async (h) => {
    await assert.rejects(h.store.saveStep('no-such-task', 'x', 1));
    assert.deepEqual(await h.store.loadSteps('no-such-task'), {});
  });
}
