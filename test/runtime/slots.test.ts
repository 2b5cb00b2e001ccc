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
});
