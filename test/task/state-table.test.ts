import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TaskrailError } from '../../src/task/errors.js';
import { newTaskRecord, type TaskRecord } from '../../src/task/record.js';
import { TASK_STATUSES, isTaskStatus, isTerminal, type TaskStatus } from '../../src/task/status.js';
import * as t from '../../src/task/transitions.js';

const question = { method: 'elicitation/create', params: { message: 'go on?' } };

const created = (): TaskRecord =>
  newTaskRecord(
    { id: 'task-1', principal: 'p', tool: 'demo', arguments: {}, ttlMs: null, pollIntervalMs: 50 },
    1000,
  );

/** A task in `status`, reached through the transitions themselves. */
function inStatus(status: TaskStatus): TaskRecord {
  const working = created();
  switch (status) {
    case 'working':
      return working;
    case 'input_required':
      return t.requestInput(working, { first: question }, 1001);
    case 'completed':
      return t.complete(working, { content: [] }, 1001);
    case 'failed':
      return t.fail(working, { code: -32603, message: 'boom' }, 1001);
    case 'cancelled':
      return t.cancel(working, 1001);
  }
}

/** Every write a runtime makes, each named by the status it asks for (or keeps). */
const MOVES: Record<string, (task: TaskRecord) => TaskRecord> = {
  complete: (task) => t.complete(task, { content: [] }, 2000),
  fail: (task) => t.fail(task, { code: -32001, message: 'no' }, 2000),
  cancel: (task) => t.cancel(task, 2000),
  'ask a new question': (task) => t.requestInput(task, { second: question }, 2000),
  report: (task) => t.report(task, 'half way', 2000),
  retry: (task) => t.retry(task, 2000),
  wait: (task) => t.wait(task, 'sleeping', 2000),
};

/** from → move → the status it ends in, or the error code it is refused with. */
const EXPECTED: Record<TaskStatus, Record<string, TaskStatus | string>> = {
  working: {
    complete: 'completed',
    fail: 'failed',
    cancel: 'cancelled',
    'ask a new question': 'input_required',
    report: 'working',
    retry: 'working',
    wait: 'working',
  },
  input_required: {
    complete: 'completed',
    fail: 'failed',
    cancel: 'cancelled',
    // One round of questions at a time: a parked task is answered before it asks again.
    'ask a new question': 'INVALID_TRANSITION',
    report: 'input_required',
    retry: 'INVALID_TRANSITION',
    wait: 'INVALID_TRANSITION',
  },
  completed: {},
  failed: {},
  cancelled: {},
};
for (const status of ['completed', 'failed', 'cancelled'] as const) {
  for (const move of Object.keys(MOVES)) {
    // A finished task refuses every write; retry and wait name only the working rule.
    EXPECTED[status][move] =
      move === 'retry' || move === 'wait' ? 'INVALID_TRANSITION' : 'TASK_TERMINAL';
  }
}

function outcome(move: (task: TaskRecord) => TaskRecord, from: TaskRecord): string {
  try {
    return move(from).status;
  } catch (error) {
    assert.ok(error instanceof TaskrailError, `a TaskrailError, not ${String(error)}`);
    return error.code;
  }
}

describe('the state table, through the transitions', () => {
  for (const from of TASK_STATUSES) {
    for (const [name, move] of Object.entries(MOVES)) {
      const expected = EXPECTED[from][name];
      it(`${from} → ${name}: ${String(expected)}`, () => {
        const before = inStatus(from);
        const snapshot = structuredClone(before);
        assert.equal(outcome(move, before), expected);
        assert.deepEqual(before, snapshot, 'the task given is never changed in place');
      });
    }
  }

  it('bumps the revision by one on every accepted write and keeps the newest update time', () => {
    for (const from of TASK_STATUSES) {
      for (const [name, move] of Object.entries(MOVES)) {
        const before = inStatus(from);
        let after: TaskRecord;
        try {
          after = move(before);
        } catch {
          continue;
        }
        assert.equal(after.revision, before.revision + 1, `${from} → ${name}`);
        assert.equal(after.updatedAt, 2000, `${from} → ${name}`);
        assert.equal(move({ ...before, updatedAt: 5000 }).updatedAt, 5000, 'never back in time');
      }
    }
  });

  it('names why a move is refused: the statuses in the message', () => {
    assert.throws(
      () => t.complete(inStatus('cancelled'), { content: [] }, 2000),
      /task task-1: cannot move from 'cancelled' to 'completed'/,
    );
    assert.throws(
      () => t.requestInput(inStatus('input_required'), { second: question }, 2000),
      /cannot move from 'input_required' to 'input_required'/,
    );
  });

  it('knows exactly the five statuses, three of them final', () => {
    assert.deepEqual(TASK_STATUSES.filter(isTerminal), ['completed', 'failed', 'cancelled']);
    for (const status of TASK_STATUSES) assert.ok(isTaskStatus(status));
    for (const other of ['tool_error', 'Working', '', null, 1])
      assert.equal(isTaskStatus(other), false);
  });
});

describe('what each accepted write leaves on the task', () => {
  it('a retry counts the attempt; a wait keeps it unless a retry is waiting', () => {
    const working = created();
    assert.equal(t.retry(working, 2000).attempt, 2);
    const sleeping = t.wait(working, 'sleeping until 12:00', 2000);
    assert.equal(sleeping.attempt, 1);
    assert.equal(sleeping.statusMessage, 'sleeping until 12:00');
    assert.equal(t.wait(working, 'attempt 3 of 3 at 12:00', 2000, 3).attempt, 3);
  });

  it('a failure keeps its error and says it, unless given another message', () => {
    const error = { code: -32001, message: 'quota exceeded' };
    const failed = t.fail(created(), error, 2000);
    assert.deepEqual(failed.error, error);
    assert.equal(failed.statusMessage, 'quota exceeded');
    assert.equal(t.fail(created(), error, 2000, 'gave up').statusMessage, 'gave up');
  });

  it('a cancel says so; completing and resuming drop a stale message', () => {
    assert.equal(t.cancel(created(), 2000).statusMessage, 'Cancelled by request.');
    const reported = t.report(created(), 'writing 3/4', 1500);
    assert.equal('statusMessage' in t.complete(reported, { content: [] }, 2000), false);
    const parked = t.requestInput(reported, { first: question }, 1600, 'Go on?');
    assert.equal(parked.statusMessage, 'Go on?');
    const resumed = t.answerInput(parked, { first: { action: 'accept' } }, 2000);
    assert.equal(resumed.task.status, 'working');
    assert.equal('statusMessage' in resumed.task, false);
  });

  it('answers change nothing unless the task waits for them', () => {
    const working = created();
    const noop = t.answerInput(working, { first: { action: 'accept' } }, 2000);
    assert.equal(noop.task, working);
    assert.deepEqual(noop.accepted, []);
    const done = inStatus('completed');
    assert.equal(t.answerInput(done, { first: { action: 'accept' } }, 2000).task, done);
  });
});
