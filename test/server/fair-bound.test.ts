import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FairBound, fairKeyOf, type FairTicket } from '../../src/server/tasks/fair-bound.js';

function takeAll(bound: FairBound, key: string, n: number): FairTicket[] {
  const tickets: FairTicket[] = [];
  for (let i = 0; i < n; i++) {
    const ticket = bound.tryTake(key);
    if (typeof ticket !== 'string') tickets.push(ticket);
  }
  return tickets;
}

describe('FairBound', () => {
  it('gives one key at most half of the capacity, alone or not, and the rest to others', () => {
    const bound = new FairBound({ capacity: 8 });
    assert.equal(takeAll(bound, 'alice', 20).length, 4);
    assert.equal(bound.tryTake('alice'), 'share');
    assert.equal(takeAll(bound, 'bob', 20).length, 4);
    assert.equal(bound.tryTake('carol'), 'full');
    assert.equal(bound.total, 8);
  });

  it('lends past half to a key alone, and stops lending once another key holds', () => {
    const bound = new FairBound({ capacity: 6, lend: true });
    const alice = takeAll(bound, 'alice', 5);
    assert.equal(alice.length, 5);
    assert.equal(typeof bound.tryTake('bob'), 'object');
    assert.equal(bound.tryTake('alice'), 'share');
    assert.deepEqual(bound.largest(), { key: 'alice', held: 5 });
  });

  it('gives a unit back once, and a refusal holds nothing', () => {
    const bound = new FairBound({ capacity: 2 });
    const [ticket] = takeAll(bound, 'alice', 3);
    assert.equal(bound.total, 1);
    ticket?.give();
    ticket?.give();
    assert.equal(bound.total, 0);
    assert.equal(bound.heldBy('alice'), 0);
  });

  it('serves a waiting key before a key at its share, and drops an aborted waiter', async () => {
    const bound = new FairBound({ capacity: 2 });
    const a1 = await bound.take('alice', AbortSignal.timeout(5000));
    const b1 = await bound.take('bob', AbortSignal.timeout(5000));
    const gone = new AbortController();
    const abandoned = bound.take('carol', gone.signal);
    const aliceAgain = bound.take('alice', AbortSignal.timeout(5000));
    const bobAgain = bound.take('bob', AbortSignal.timeout(5000));
    gone.abort(new Error('caller left'));
    await assert.rejects(abandoned, /caller left/);
    a1.give();
    // Alice's own unit freed: she is first in line and under her share again.
    assert.equal((await aliceAgain).key, 'alice');
    b1.give();
    assert.equal((await bobAgain).key, 'bob');
    assert.equal(bound.total, 2);
  });

  it('splits the anonymous principal by its connection or session only', () => {
    assert.equal(fairKeyOf('alice', '127.0.0.1:5000'), 'alice');
    assert.equal(fairKeyOf('anonymous', '127.0.0.1:5000'), 'anonymous#127.0.0.1:5000');
    assert.equal(fairKeyOf('anonymous', undefined), 'anonymous');
  });

  it('with a reserve, keeps the last unit for a key holding none', async () => {
    const bound = new FairBound({ capacity: 4, reserve: 1 });
    const held = ['alice', 'alice', 'bob'].map((key) => bound.tryTake(key));
    assert.ok(held.every((ticket) => typeof ticket !== 'string'));
    assert.equal(bound.tryTake('bob'), 'share', 'bob may not take the last unit');
    const waiting = bound.take('bob', AbortSignal.timeout(5000));
    const carol = bound.tryTake('carol');
    assert.equal(typeof carol, 'object', 'a newcomer gets it');
    assert.equal(bound.tryTake('dave'), 'full');
    (held[2] as FairTicket).give();
    assert.equal((await waiting).key, 'bob');
  });

  it('refuses a capacity that is not a whole number of at least 1', () => {
    assert.throws(() => new FairBound({ capacity: 0 }), /whole number/);
  });
});
