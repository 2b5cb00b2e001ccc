import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  encodeAck,
  encodeDetailedTask,
  encodeInlineResult,
  encodeTask,
  withStructuredText,
} from '../../src/protocol/index.js';
import {
  accepts2025ToolTasks,
  alreadyTerminalMessage,
  declares2025Tasks,
  encodeCreateTaskResult2025,
  encodeTask2025,
  encodeTaskPayload2025,
  status2025,
} from '../../src/protocol/wire-2025.js';
import { newTaskRecord, type TaskRecord } from '../../src/task/record.js';
import * as t from '../../src/task/transitions.js';

const RELATED = 'io.modelcontextprotocol/related-task';
const T0 = Date.UTC(2026, 6, 28);
const question = { method: 'elicitation/create', params: { message: 'go on?' } };

const created = (pollIntervalMs = 50): TaskRecord =>
  newTaskRecord(
    { id: 'task-1', principal: 'p', tool: 'demo', arguments: {}, ttlMs: 60_000, pollIntervalMs },
    T0,
  );

describe('the 2026-07-28 Task', () => {
  it('has ISO times, the ttl, and a rounded poll interval only when there is one', () => {
    assert.deepEqual(encodeTask(created(12.6)), {
      taskId: 'task-1',
      status: 'working',
      createdAt: '2026-07-28T00:00:00.000Z',
      lastUpdatedAt: '2026-07-28T00:00:00.000Z',
      ttlMs: 60_000,
      pollIntervalMs: 13,
    });
    assert.equal('pollIntervalMs' in encodeTask(created(0)), false);
  });

  it('details what the status carries: the result, the error, or the pending questions', () => {
    const done = t.complete(created(), { content: [{ type: 'text', text: 'hi' }] }, T0 + 1);
    assert.deepEqual(encodeDetailedTask(done)['result'], {
      content: [{ type: 'text', text: 'hi' }],
      resultType: 'complete',
    });
    const failed = t.fail(created(), { code: -32001, message: 'quota' }, T0 + 1);
    assert.deepEqual(encodeDetailedTask(failed)['error'], { code: -32001, message: 'quota' });
    const { error: _none, ...withoutError } = failed;
    assert.deepEqual(encodeDetailedTask(withoutError)['error'], {
      code: -32603,
      message: 'Task failed',
    });
    const parked = t.requestInput(created(), { a: question, b: question }, T0 + 1);
    const answeredOne = t.answerInput(parked, { a: { action: 'accept' } }, T0 + 2).task;
    assert.deepEqual(encodeDetailedTask(answeredOne)['inputRequests'], { b: question });
    const working = encodeDetailedTask(created());
    for (const key of ['result', 'error', 'inputRequests']) assert.equal(key in working, false);
    assert.deepEqual(encodeAck(), { resultType: 'complete' });
  });

  it('inlines a result without its related-task _meta, keeping any other _meta', () => {
    const onlyRelated = { content: [], _meta: { [RELATED]: { taskId: 'task-1' } } };
    assert.deepEqual(encodeInlineResult(onlyRelated), { content: [], resultType: 'complete' });
    const more = { content: [], _meta: { [RELATED]: { taskId: 'x' }, trace: 'abc' } };
    assert.deepEqual(encodeInlineResult(more)['_meta'], { trace: 'abc' });
    assert.deepEqual(encodeInlineResult({ isError: true })['content'], []);
    assert.deepEqual(onlyRelated._meta, { [RELATED]: { taskId: 'task-1' } }, 'input untouched');
  });
});

describe('structured results as text', () => {
  it('adds the structured JSON as a text block unless a text block holds it', () => {
    const result = { content: [{ type: 'text', text: 'report' }], structuredContent: { n: 1 } };
    assert.deepEqual(withStructuredText(result)['content'], [
      { type: 'text', text: 'report' },
      { type: 'text', text: '{"n":1}' },
    ]);
    const carried = {
      content: [{ type: 'text', text: 'n is {"n":1}' }],
      structuredContent: { n: 1 },
    };
    assert.equal(withStructuredText(carried), carried);
    const plain = { content: [] };
    assert.equal(withStructuredText(plain), plain);
    assert.deepEqual(withStructuredText({ structuredContent: [1] }), {
      structuredContent: [1],
      content: [{ type: 'text', text: '[1]' }],
    });
  });
});

describe('the 2025-11-25 wire', () => {
  const toolError = () => t.complete(created(), { content: [], isError: true }, T0 + 1);

  it('shows a tool result with isError as failed, saying why', () => {
    assert.equal(status2025(toolError()), 'failed');
    assert.equal(status2025(t.complete(created(), { content: [] }, T0 + 1)), 'completed');
    const wire = encodeTask2025(toolError());
    assert.equal(wire.status, 'failed');
    assert.equal(wire.statusMessage, 'Tool execution failed (isError)');
    assert.equal(wire.ttl, 60_000);
    assert.equal(wire.pollInterval, 50);
  });

  it('nests the created task and carries the immediate response hint', () => {
    const result = encodeCreateTaskResult2025(created(), 'Working on it.');
    assert.equal((result['task'] as { taskId: string }).taskId, 'task-1');
    assert.deepEqual(result['_meta'], {
      'io.modelcontextprotocol/model-immediate-response': 'Working on it.',
    });
    assert.equal('_meta' in encodeCreateTaskResult2025(created()), false);
  });

  it('answers tasks/result with the result and its related task, or an error', () => {
    const done = t.complete(created(), { content: [], _meta: { trace: 'a' } }, T0 + 1);
    const payload = encodeTaskPayload2025(done);
    assert.ok(payload.ok);
    assert.deepEqual(payload.result['_meta'], { trace: 'a', [RELATED]: { taskId: 'task-1' } });
    const failed = encodeTaskPayload2025(t.fail(created(), { code: -32001, message: 'no' }, T0));
    assert.deepEqual(failed, { ok: false, error: { code: -32001, message: 'no' } });
    const cancelled = encodeTaskPayload2025(t.cancel(created(), T0, 'user said stop'));
    assert.ok(!cancelled.ok);
    assert.equal(cancelled.error.message, 'Task was cancelled: user said stop');
    assert.equal(
      alreadyTerminalMessage(toolError()),
      "Cannot cancel task: already in terminal status 'failed'",
    );
  });

  it('reads the tasks capabilities of initialize', () => {
    assert.equal(declares2025Tasks({ tasks: {} }), true);
    assert.equal(declares2025Tasks({ tasks: null }), false);
    assert.equal(declares2025Tasks({ extensions: {} }), false);
    assert.equal(accepts2025ToolTasks({ tasks: { requests: { tools: { call: {} } } } }), true);
    assert.equal(accepts2025ToolTasks({ tasks: { requests: { tools: {} } } }), false);
    assert.equal(accepts2025ToolTasks({ tasks: { list: {} } }), false);
    assert.equal(accepts2025ToolTasks(undefined), false);
  });
});
