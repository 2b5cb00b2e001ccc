import assert from 'node:assert/strict';
import type { DefineCase } from './harness.js';

export function registerIdempotencyCases(define: DefineCase): void {
  define('a repeated idempotency key of the same principal returns the first task', async (h) => {
    const first = await h.create({ idempotencyKey: 'retry-1' });
    const retry = h.record({ idempotencyKey: 'retry-1', arguments: { seconds: 2 } });
    const outcome = await h.store.create(retry);
    assert.equal(outcome.created, false);
    assert.deepEqual(outcome.task, first);
    assert.equal(await h.store.get(retry.id), undefined, 'the retry wrote nothing');
  });

  define('idempotency keys are scoped to the principal', async (h) => {
    const alice = await h.create({ idempotencyKey: 'shared' });
    const bob = await h.store.create(h.record({ principal: 'bob', idempotencyKey: 'shared' }));
    assert.equal(bob.created, true);
    assert.notEqual(bob.task.id, alice.id);
    assert.equal((await h.store.get(alice.id))?.principal, 'alice');
  });

  define('tasks without an idempotency key never collide', async (h) => {
    const a = await h.store.create(h.record());
    const b = await h.store.create(h.record());
    assert.equal(a.created && b.created, true);
    assert.notEqual(a.task.id, b.task.id);
  });

  define('an expired task frees its idempotency key', async (h) => {
    const first = await h.create({ idempotencyKey: 'k', ttlMs: 1000 });
    h.clock.advance(1000);
    const second = await h.store.create(h.record({ idempotencyKey: 'k' }));
    assert.equal(second.created, true);
    assert.notEqual(second.task.id, first.id);
    assert.equal(await h.store.get(first.id), undefined);
  });

  define('concurrent creations with one key make exactly one task', async (h) => {
    const peer = await h.peer();
    for (let round = 0; round < h.raceRounds; round++) {
      const key = `race-${round}`;
      const outcomes = await Promise.all(
        [0, 1, 2, 3, 4].map((i) =>
          (i % 2 === 0 ? h.store : peer).create(h.record({ idempotencyKey: key })),
        ),
      );
      const created = outcomes.filter((outcome) => outcome.created);
      assert.equal(created.length, 1, `round ${round}: one creation wins`);
      const ids = new Set(outcomes.map((outcome) => outcome.task.id));
      assert.deepEqual([...ids], [created[0]?.task.id], `round ${round}: all see the winner`);
    }
  });
}
