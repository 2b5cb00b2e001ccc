import assert from 'node:assert/strict';
import { complete, requestInput } from '../../task/transitions.js';
import type { DefineCase } from './harness.js';

const QUESTION = { method: 'elicitation/create', params: { message: 'Go on?' } };

export function registerTakeoverCases(define: DefineCase): void {
  define('findLeased lists the live leases and who holds them', async (h) => {
    const free = await h.create();
    const held = await h.create();
    const lapsed = await h.create();
    const parked = await h.create();
    const done = await h.create();
    assert.ok(await h.store.claim(held.id, 'w1', 60_000));
    assert.ok(await h.store.claim(lapsed.id, 'w2', 100));
    assert.ok(await h.store.claim(parked.id, 'w3', 60_000));
    assert.ok(await h.store.claim(done.id, 'w4', 60_000));
    const asked = requestInput(parked, { q: QUESTION }, h.clock.now());
    assert.equal((await h.store.compareAndSet(asked, parked.revision)).ok, true);
    const finished = complete(done, { content: [] }, h.clock.now());
    assert.equal((await h.store.compareAndSet(finished, done.revision)).ok, true);
    h.clock.advance(100);
    assert.deepEqual(await (await h.peer()).findLeased(10), [{ id: held.id, owner: 'w1' }]);
    assert.ok(free);
    const more = await h.create();
    assert.ok(await h.store.claim(more.id, 'w5', 60_000));
    assert.equal((await h.store.findLeased(1)).length, 1);
    assert.deepEqual(await h.store.findLeased(0), []);
  });

  define('a live lease is taken over only from the holder named', async (h) => {
    const task = await h.create();
    const first = await h.store.claim(task.id, 'gone', 60_000);
    assert.ok(first);
    const peer = await h.peer();
    assert.equal(await peer.claim(task.id, 'me', 60_000), undefined);
    assert.equal(await peer.claim(task.id, 'me', 60_000, { takeOverFrom: 'other' }), undefined);
    const taken = await peer.claim(task.id, 'me', 60_000, { takeOverFrom: 'gone' });
    assert.ok(taken);
    assert.equal(taken.interrupted, true);
    assert.equal((await h.store.renewLease(task.id, first.token, 60_000)).held, false);
    assert.equal((await h.store.renewLease(task.id, taken.token, 60_000)).held, true);
    assert.equal(await h.store.claim(task.id, 'x', 60_000, { takeOverFrom: 'gone' }), undefined);
    assert.deepEqual(await h.store.findLeased(10), [{ id: task.id, owner: 'me' }]);
  });

  define('naming a holder does not matter for a task nobody holds', async (h) => {
    const task = await h.create();
    const grant = await h.store.claim(task.id, 'me', 60_000, { takeOverFrom: 'gone' });
    assert.equal(grant?.interrupted, false);
  });
}
