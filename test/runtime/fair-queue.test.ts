import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FairQueue } from '../../src/runtime/fair-queue.js';

function takeAll(queue: FairQueue): string[] {
  const taken: string[] = [];
  for (let next = queue.take(); next !== undefined; next = queue.take()) {
    taken.push(next.taskId);
    queue.finished(next.principal);
  }
  return taken;
}

describe('fair queue', () => {
  it('takes principals in turn, each one in the order its tasks came', () => {
    const queue = new FairQueue(4);
    for (let i = 1; i <= 3; i++) queue.push(`a${i}`, 'alice');
    queue.push('b1', 'bob');
    queue.push('b2', 'bob');
    queue.push('c1', 'carol');
    assert.deepEqual(takeAll(queue), ['a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
    assert.equal(queue.size, 0);
  });

  it("one principal's backlog lets a newcomer start after at most one more of its tasks", () => {
    const queue = new FairQueue(2);
    for (let i = 1; i <= 80; i++) queue.push(`a${i}`, 'alice');
    assert.equal(queue.take()?.taskId, 'a1');
    queue.push('b1', 'bob');
    assert.deepEqual([queue.take()?.taskId, queue.take()?.taskId], ['a2', 'b1']);
  });

  it('passes over a principal on more than half of the slots while another waits', () => {
    const queue = new FairQueue(4);
    for (let i = 0; i < 3; i++) queue.started('alice');
    queue.push('a4', 'alice');
    queue.push('b1', 'bob');
    assert.equal(queue.take()?.taskId, 'b1', 'alice holds 3 of 4 slots');
    assert.equal(queue.take()?.taskId, 'a4', 'nobody else waits');
  });

  it('reports waiting depths without names, and drains', () => {
    const queue = new FairQueue(1);
    queue.push('a1', 'alice');
    queue.push('a2', 'alice');
    queue.push('b1', 'bob');
    assert.deepEqual(queue.depths().sort(), [1, 2]);
    assert.deepEqual(queue.drain().sort(), ['a1', 'a2', 'b1']);
    assert.equal(queue.take(), undefined);
  });
});
