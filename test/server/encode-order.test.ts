import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  encodeCreateTaskResult,
  encodeDetailedTask,
  encodeGetTaskResult,
  encodeTask,
} from '../../src/protocol/encode.js';
import { newTaskRecord } from '../../src/task/record.js';
import * as t from '../../src/task/transitions.js';

const created = newTaskRecord(
  { id: 'task-1', principal: 'p', tool: 'noop', arguments: {}, ttlMs: 1000, pollIntervalMs: 5 },
  Date.UTC(2026, 0, 1),
);

describe('wire encoders', () => {
  it('write the Task fields in the wire order after what comes first', () => {
    const result = encodeCreateTaskResult(created, { content: [] });
    assert.deepEqual(Object.keys(result), [
      'content',
      'resultType',
      'taskId',
      'status',
      'createdAt',
      'lastUpdatedAt',
      'ttlMs',
      'pollIntervalMs',
    ]);
    assert.equal(result.lastUpdatedAt, '2026-01-01T00:00:00.000Z');
    assert.deepEqual(Object.keys(encodeCreateTaskResult(created)).slice(0, 2), [
      'resultType',
      'taskId',
    ]);
  });

  it('encode a finished task with its own update time and its result last', () => {
    const done = t.complete(created, { content: [] }, Date.UTC(2026, 0, 1, 0, 0, 1));
    const got = encodeGetTaskResult(done);
    assert.deepEqual(Object.keys(got), ['resultType', ...Object.keys(encodeTask(done)), 'result']);
    assert.equal(got['lastUpdatedAt'], '2026-01-01T00:00:01.000Z');
    assert.equal(got['createdAt'], '2026-01-01T00:00:00.000Z');
    assert.deepEqual(encodeDetailedTask(done)['result'], { content: [], resultType: 'complete' });
  });

  it('keeps a status message in its place and drops a stale one on completion', () => {
    const parked = { ...created, statusMessage: 'half way' };
    assert.deepEqual(Object.keys(encodeTask(parked)).slice(5), ['statusMessage', 'pollIntervalMs']);
    assert.equal('statusMessage' in t.complete(parked, { content: [] }, Date.now()), false);
  });
});
