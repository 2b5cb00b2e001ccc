import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { taskResult } from '../../src/server/tasks/operations.js';
import { TaskGetCache } from '../../src/server/wire-2026/tasks-get-cache.js';
import { newTaskRecord, type TaskRecord } from '../../src/task/record.js';
import * as t from '../../src/task/transitions.js';

const serverInfo = { name: 'test', version: '1.0.0' };
const start = Date.UTC(2026, 0, 1);
const created = newTaskRecord(
  { id: 'task-1', principal: 'p', tool: 'noop', arguments: {}, ttlMs: 1000, pollIntervalMs: 5 },
  start,
);
const encoded = (task: TaskRecord) => JSON.stringify(taskResult('tasks/get', task, serverInfo));

describe('the tasks/get answers cached per revision', () => {
  it('are the bytes the encoder writes, for the task as it is now', () => {
    const answers = new TaskGetCache(serverInfo);
    assert.equal(answers.json(created), encoded(created));
    assert.equal(answers.json({ ...created }), encoded(created));
    const done = t.complete(created, { content: [{ type: 'text', text: 'hi' }] }, start + 1);
    assert.equal(done.revision, created.revision + 1);
    assert.equal(answers.json(done), encoded(done));
    assert.match(answers.json(done), /"status":"completed"/);
  });

  it('do not outlive a change of the task, even within one millisecond', () => {
    const answers = new TaskGetCache(serverInfo);
    answers.json(created);
    const moved = { ...created, revision: created.revision + 1, statusMessage: 'halfway' };
    assert.equal(answers.json(moved), encoded(moved));
    const recreated = { ...created, createdAt: start - 1 };
    assert.equal(answers.json(recreated), encoded(recreated));
  });
});
