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
import { complete } from '../../src/task/transitions.js';

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

  it('reads a --status list, tool-error taken for tool_error', () => {
    assert.deepEqual(splitOutcomeList('completed, tool-error,failed'), [
      'completed',
      'tool_error',
      'failed',
    ]);
    assert.ok(isTaskOutcome('tool_error'));
    assert.ok(isTaskOutcome('input_required'));
    assert.ok(!isTaskOutcome('lost'));
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
