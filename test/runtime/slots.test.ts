import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Slots } from '../../src/executors/shared/slots.js';

describe('Slots', () => {
  it('grants up to its capacity, hands released slots to waiters in order', async () => {
    const slots = new Slots(2);
    assert.equal(slots.tryAcquire(), true);
    await slots.acquire();
    assert.equal(slots.tryAcquire(), false, 'full');
    const order: string[] = [];
    const first = slots.acquire().then(() => order.push('first'));
    const second = slots.acquire().then(() => order.push('second'));
    slots.release();
    await first;
    assert.equal(
      slots.tryAcquire(),
      false,
      'still full: the released slot went to the first waiter',
    );
    slots.release();
    await second;
    assert.deepEqual(order, ['first', 'second']);
    assert.equal(slots.used, 2);
    slots.release();
    slots.release();
    assert.equal(slots.used, 0);
    assert.equal(slots.tryAcquire(), true);
  });

  it('tells when a slot is free without taking it, after the queued waiters are served', async () => {
    const slots = new Slots(1);
    await slots.acquire();
    let free = false;
    const watched = slots.whenFree().then(() => (free = true));
    const queued = slots.acquire();
    slots.release();
    await queued;
    await Promise.resolve();
    assert.equal(free, false, 'the released slot went to the queued waiter');
    slots.release();
    await watched;
    assert.equal(slots.used, 0, 'watching took no slot');
    await slots.whenFree(); // free now: resolves at once
  });

  it('stops every watcher waiting when closed', async () => {
    const slots = new Slots(1);
    await slots.acquire();
    const watched = slots.whenFree();
    slots.close();
    await watched;
    await slots.whenFree();
    assert.equal(slots.used, 1, 'closing frees nothing');
  });
});
