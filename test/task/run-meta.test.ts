import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newTaskRecord, type TaskRecord } from '../../src/task/record.js';
import {
  attemptsText,
  markWaiting,
  metaWithMaxAttempts,
  runViewOf,
  waitText,
} from '../../src/task/run-meta.js';
import { complete, report, wait } from '../../src/task/transitions.js';

const T0 = Date.parse('2026-12-04T03:00:00.000Z');

function task(meta = {}): TaskRecord {
  return newTaskRecord(
    {
      id: 'run-meta-1',
      principal: 'p',
      tool: 't',
      arguments: {},
      ttlMs: null,
      pollIntervalMs: 1000,
      meta,
    },
    T0,
  );
}

describe('run meta: attempts and durable waits as stored fields', () => {
  it('keeps the meta a task was created with beside the attempt limit', () => {
    const created = task(metaWithMaxAttempts({ session: 's1' }, 5));
    assert.equal(created.meta['session'], 's1');
    assert.deepEqual(runViewOf(created, T0), { attempt: 1, maxAttempts: 5 });
    assert.equal(attemptsText(runViewOf(created, T0)), '1 of 5');
    assert.equal(attemptsText(runViewOf(task(), T0)), '1', 'no limit recorded: the attempt alone');
  });

  it('shows a backoff until its wake time, then as due', () => {
    const waiting = markWaiting(
      wait(task(metaWithMaxAttempts({}, 3)), 'retry', T0, 2),
      'backoff',
      T0 + 5000,
    );
    const before = runViewOf(waiting, T0 + 1000);
    assert.deepEqual(before, {
      attempt: 2,
      maxAttempts: 3,
      waiting: { kind: 'backoff', until: T0 + 5000, due: false },
    });
    assert.equal(waitText(before.waiting!), 'backoff until 2026-12-04T03:00:05.000Z');
    assert.equal(runViewOf(waiting, T0 + 5000).waiting?.due, true);
    assert.match(waitText(runViewOf(waiting, T0 + 6000).waiting!), /\(due\)$/);
  });

  it('ends the wait at the next write of the task (the run woke)', () => {
    const sleeping = markWaiting(wait(task(), 'sleeping', T0), 'sleep', T0 + 1000);
    assert.equal(runViewOf(sleeping, T0).waiting?.kind, 'sleep');
    const woke = report(sleeping, 'step 2 of 4', T0 + 1500);
    assert.equal(runViewOf(woke, T0 + 1500).waiting, undefined);
    const done = complete(sleeping, { content: [] }, T0 + 1500);
    assert.equal(
      runViewOf(done, T0 + 1500).waiting,
      undefined,
      'a terminal task waits for nothing',
    );
  });

  it('shows a permit wait, which has no wake time', () => {
    const queued = markWaiting(wait(task(), 'waiting for a concurrency slot', T0), 'permit');
    assert.deepEqual(runViewOf(queued, T0 + 60_000).waiting, { kind: 'permit', due: false });
    assert.equal(waitText(runViewOf(queued, T0).waiting!), 'permit');
  });

  it('keeps no wait a creation brought along in its meta', () => {
    const forged = { 'taskrail/run': { wait: { kind: 'sleep', until: T0 + 1000, revision: 1 } } };
    const created = task(metaWithMaxAttempts(forged, 3));
    assert.deepEqual(runViewOf(created, T0), { attempt: 1, maxAttempts: 3 });
  });

  it('ignores a meta entry of the wrong shape', () => {
    const odd = task({ 'taskrail/run': 'not an object' });
    assert.deepEqual(runViewOf(odd, T0), { attempt: 1 });
  });
});
