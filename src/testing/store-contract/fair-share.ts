import assert from 'node:assert/strict';
import { cancel, complete, requestInput } from '../../task/transitions.js';
import type { DefineCase } from './harness.js';

const QUESTION = { method: 'elicitation/create', params: { message: 'Go on?' } };

export function registerFairShareCases(define: DefineCase): void {
  define('countUnfinished counts working and input_required tasks of one principal', async (h) => {
    const count = h.store.countUnfinished?.bind(h.store);
    if (count === undefined) return h.skip('the store does not count unfinished tasks');
    const working = await h.create({ principal: 'alice' });
    const asking = await h.create({ principal: 'alice' });
    const done = await h.create({ principal: 'alice' });
    const dropped = await h.create({ principal: 'alice' });
    await h.create({ principal: 'alice', ttlMs: 500 });
    await h.create({ principal: 'bob' });
    const now = h.clock.now();
    await h.store.compareAndSet(requestInput(asking, { q: QUESTION }, now), asking.revision);
    await h.store.compareAndSet(complete(done, { content: [] }, now), done.revision);
    await h.store.compareAndSet(cancel(dropped, now), dropped.revision);
    h.clock.advance(1000);
    await h.store.sweepExpired(100); // a store may count an expired task until it is swept
    assert.equal(await count('alice', 100), 2, 'the expired and the finished ones do not count');
    assert.equal(await count('alice', 1), 1, 'counted up to atMost');
    assert.equal(await count('bob', 100), 1);
    assert.equal(await count('carol', 100), 0);
    assert.ok(working);
  });

  define('findRunnable takes principals in turn, each one oldest first', async (h) => {
    const alice = [];
    for (let i = 0; i < 4; i++) {
      alice.push(await h.create({ principal: 'alice' }));
      h.clock.advance(1);
    }
    const bob = await h.create({ principal: 'bob' });
    h.clock.advance(1);
    const carol = await h.create({ principal: 'carol' });
    const found = await h.store.findRunnable(3);
    assert.deepEqual([...found].sort(), [alice[0]?.id, bob.id, carol.id].sort());
  });
}
