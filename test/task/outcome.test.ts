import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EXIT_CODES, EXIT_USAGE, exitCodeFor } from '../../src/client/outcome.js';
import {
  isTaskOutcome,
  outcomeOf,
  outcomeOfStatus,
  splitOutcomeList,
} from '../../src/task/outcome.js';
import { newTaskRecord } from '../../src/task/record.js';
import { TASK_STATUSES } from '../../src/task/status.js';
import { complete, fail } from '../../src/task/transitions.js';

const created = () =>
  newTaskRecord(
    { id: 't', principal: 'p', tool: 'x', arguments: {}, ttlMs: 1000, pollIntervalMs: 50 },
    0,
  );

describe('task outcomes', () => {
  it('a completed task with an isError result is a tool_error, any other keeps its status', () => {
    const failedTool = complete(created(), { content: [], isError: true }, 1);
    const succeeded = complete(created(), { content: [] }, 1);
    assert.equal(outcomeOf(failedTool), 'tool_error');
    assert.equal(outcomeOf(succeeded), 'completed');
    assert.equal(outcomeOf(created()), 'working');
    assert.equal(outcomeOfStatus('lost', true), 'lost');
  });

  it('only a completed task with isError exactly true is a tool_error', () => {
    const done = (result: Record<string, unknown>) =>
      complete(created(), { content: [], ...result }, 1);
    assert.equal(outcomeOf(done({ isError: false })), 'completed');
    assert.equal(outcomeOf(done({ isError: 'true' })), 'completed');
    assert.equal(outcomeOf(done({ isError: 1 })), 'completed');
    for (const status of TASK_STATUSES) {
      const expected = status === 'completed' ? 'tool_error' : status;
      assert.equal(outcomeOfStatus(status, true), expected, status);
      assert.equal(outcomeOfStatus(status, false), status, status);
    }
    const failed = fail(created(), { code: -32001, message: 'no' }, 1);
    assert.equal(outcomeOf({ ...failed, result: { content: [], isError: true } }), 'failed');
  });

  it('reads a --status list, tool-error taken for tool_error', () => {
    assert.deepEqual(splitOutcomeList('completed, tool-error,failed'), [
      'completed',
      'tool_error',
      'failed',
    ]);
    assert.ok(isTaskOutcome('tool_error'));
    assert.ok(isTaskOutcome('input_required'));
    assert.ok(!isTaskOutcome('lost'));
    assert.deepEqual(splitOutcomeList(' working ,input_required'), ['working', 'input_required']);
    assert.deepEqual(splitOutcomeList('tool_error'), ['tool_error']);
  });
});

describe('exit codes', () => {
  it('one per outcome, as the CLI documents them', () => {
    assert.deepEqual(EXIT_CODES, {
      completed: 0,
      tool_error: 1,
      failed: 2,
      invalid_output: 2,
      cancelled: 3,
      lost: 4,
      rejected: 5,
    });
    assert.equal(EXIT_USAGE, 4);
    assert.equal(exitCodeFor({ kind: 'rejected', errors: [] }), 5);
  });
});
