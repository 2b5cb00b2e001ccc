import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fairTag, FairGate, QuietLook } from '../../src/executors/shared/fair-gate.js';

describe("fair gate (one worker's share of the more-than-half rule)", () => {
  it('tags a principal with a short digest, the one the postgres trigger computes', () => {
    // SELECT left(md5('alice'), 16)
    assert.equal(fairTag('alice'), '6384e2b2184bcbf5');
    assert.notEqual(fairTag('bob'), fairTag('alice'));
  });

  it('lets a principal hold at most half of the slots, and one slot whatever their number', () => {
    const four = new FairGate(4);
    assert.equal(four.isFull('a'), false);
    four.took('a');
    assert.equal(four.isFull('a'), false, '2 of 4 is half');
    four.took('a');
    assert.equal(four.isFull('a'), true, '3 of 4 would be more than half');
    four.gaveBack('a');
    assert.equal(four.isFull('a'), false);
    const one = new FairGate(1);
    assert.equal(one.isFull('a'), false, 'a principal with no slot may take one');
    one.took('a');
    assert.equal(one.isFull('a'), true);
  });

  it('stands back for the first waiting job of a principal that is not full', () => {
    const gate = new FairGate(2);
    gate.took('a');
    assert.equal(gate.standsBackFor('a', ['a', 'a', 'b', 'c']), 2);
    assert.equal(gate.standsBackFor('a', ['a', undefined, 'a']), -1, 'untagged jobs do not count');
    assert.equal(gate.standsBackFor('b', ['a', 'b']), -1, 'b holds nothing here');
    gate.took('b');
    assert.equal(gate.standsBackFor('a', ['b', 'a']), -1, 'b is full too');
    assert.equal(gate.standsBackFor(undefined, ['c']), -1, 'untagged jobs never stand back');
  });

  it('passes over full principals only while another principal could take the slot', () => {
    const gate = new FairGate(2);
    gate.took('a');
    assert.deepEqual(gate.tagsToPassOver(['a', 'a']), [], 'alone in the queue: every slot');
    assert.deepEqual(gate.tagsToPassOver(['a', 'b']), ['a']);
    gate.gaveBack('a');
    assert.deepEqual(gate.tagsToPassOver(['a', 'b']), []);
  });

  it('takes a look that found nobody else for 25 ms, while the same principals are full', () => {
    let now = 1000;
    const quiet = new QuietLook(25, () => now);
    assert.equal(quiet.foundNobodyLately(['a']), false, 'nothing looked at yet');
    quiet.foundNobody(['a', 'b']);
    now += 24;
    assert.equal(quiet.foundNobodyLately(['b', 'a']), true, 'the same principals, in any order');
    assert.equal(quiet.foundNobodyLately(['a']), false, 'b has a slot free: its jobs may count');
    assert.equal(quiet.foundNobodyLately(['a', 'b', 'c']), false, 'c is full now');
    now += 1;
    assert.equal(quiet.foundNobodyLately(['a', 'b']), false, 'the answer is 25 ms old');
  });
});
