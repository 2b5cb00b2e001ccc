import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TaskrailError } from '../../src/task/errors.js';
import { isPlausibleTaskId, newTaskId } from '../../src/task/ids.js';
import { isExpired, newTaskRecord, pendingInputRequests } from '../../src/task/record.js';
import { TASK_STATUSES, TRANSITIONS, canTransition, isTerminal } from '../../src/task/status.js';
import * as t from '../../src/task/transitions.js';
import { isoTime } from '../../src/task/time.js';

const base = () =>
  newTaskRecord(
    {
      id: 'task-1',
      principal: 'alice',
      tool: 'demo',
      arguments: { a: 1 },
      ttlMs: 1000,
      pollIntervalMs: 50,
    },
    10_000,
  );
const elicit = { method: 'elicitation/create', params: { message: 'ok?' } };

describe('the status machine table', () => {
  it('lists exactly the spec transitions, terminal states final', () => {
    assert.deepEqual(
      TASK_STATUSES.flatMap((from) => TRANSITIONS[from].map((to) => `${from}->${to}`)).sort(),
      [
        'input_required->cancelled',
        'input_required->completed',
        'input_required->failed',
        'input_required->working',
        'working->cancelled',
        'working->completed',
        'working->failed',
        'working->input_required',
      ],
    );
    for (const status of ['completed', 'failed', 'cancelled'] as const) {
      assert.ok(isTerminal(status));
      for (const to of TASK_STATUSES) assert.equal(canTransition(status, to), false);
    }
  });

  it('refuses every move out of a terminal state with TASK_TERMINAL', () => {
    const done = t.complete(base(), { content: [] }, 10_001);
    for (const move of [
      () => t.complete(done, { content: [] }, 1),
      () => t.fail(done, { code: -32603, message: 'x' }, 1),
      () => t.cancel(done, 1),
      () => t.report(done, 'late progress', 1),
      () => t.requestInput(done, { k: elicit }, 1),
    ]) {
      assert.throws(
        move,
        (error: unknown) => error instanceof TaskrailError && error.code === 'TASK_TERMINAL',
      );
    }
  });
});

describe('transitions', () => {
  it('bumps the revision and the update time on every write', () => {
    const next = t.report(base(), 'halfway', 10_500);
    assert.equal(next.revision, 2);
    assert.equal(next.updatedAt, 10_500);
    assert.equal(next.statusMessage, 'halfway');
  });

  it('keeps input keys unique for the life of the task', () => {
    const parked = t.requestInput(base(), { k: elicit }, 10_001);
    assert.equal(parked.status, 'input_required');
    const answered = t.answerInput(parked, { k: { action: 'accept' } }, 10_002).task;
    assert.equal(answered.status, 'working');
    assert.throws(
      () =>
        t.requestInput(
          answered,
          { k: { method: 'elicitation/create', params: { message: 'other' } } },
          10_003,
        ),
      {
        code: 'INPUT_KEY_REUSED',
      },
    );
    assert.equal(
      t.requestInput(answered, { k: elicit }, 10_003),
      answered,
      'asking an answered key again is a replay',
    );
  });

  it('takes only pending keys, ignores unknown and repeated answers, resumes when all are in', () => {
    const parked = t.requestInput(base(), { a: elicit, b: elicit }, 10_001);
    const first = t.answerInput(
      parked,
      { a: { action: 'accept' }, zzz: { action: 'accept' } },
      10_002,
    );
    assert.deepEqual(first.accepted, ['a']);
    assert.equal(first.resumed, false);
    assert.deepEqual(Object.keys(pendingInputRequests(first.task)), ['b']);
    const again = t.answerInput(first.task, { a: { action: 'decline' } }, 10_003);
    assert.deepEqual(again.accepted, []);
    assert.equal(again.task, first.task);
    const last = t.answerInput(first.task, { b: { action: 'cancel' } }, 10_004);
    assert.equal(last.resumed, true);
    assert.equal(last.task.status, 'working');
    assert.deepEqual(last.task.inputResponses.a, { action: 'accept' });
  });

  it('expires ttlMs after creation; null never expires', () => {
    assert.equal(isExpired(base(), 10_999), false);
    assert.equal(isExpired(base(), 11_000), true);
    const forever = newTaskRecord({ ...base(), ttlMs: null }, 0);
    assert.equal(isExpired(forever, Number.MAX_SAFE_INTEGER), false);
  });
});

describe('ids and times', () => {
  it('makes URL-safe ids with at least 128 random bits', () => {
    const ids = new Set(Array.from({ length: 1000 }, newTaskId));
    assert.equal(ids.size, 1000);
    for (const id of ids) {
      assert.match(id, /^[A-Za-z0-9_-]{22,}$/);
      // After the 8 characters of the creation time: 144 random bits.
      assert.ok(Buffer.from(id.slice(8), 'base64url').length * 8 >= 144);
      assert.ok(isPlausibleTaskId(id));
    }
    assert.equal(isPlausibleTaskId('../etc'), false);
  });

  it('never starts an id with "-" (the CLI would read it as an option)', () => {
    // 1 in 64 random ids would; 20 000 draws miss that with probability (63/64)^20000 ≈ 0.
    for (let i = 0; i < 20_000; i += 1) assert.notEqual(newTaskId()[0], '-');
  });

  it('starts an id with its creation time, so ids made together are index neighbours', () => {
    const before = Date.now();
    const id = newTaskId();
    const made = Buffer.from(id.slice(0, 8), 'base64url').readUIntBE(0, 6);
    assert.ok(made >= before && made <= Date.now(), `time part ${made}`);
    assert.equal(id.length, 32);
  });

  it('renders ISO 8601 UTC with milliseconds', () => {
    assert.equal(isoTime(Date.UTC(2026, 10, 29, 16, 5, 1, 123)), '2026-11-29T16:05:01.123Z');
  });
});

describe('RpcError across package copies', () => {
  it('recognises an RpcError made by another copy of taskrail by its brand', async () => {
    const { RpcError, isRpcError, rpcErrorObject } = await import('../../src/task/errors.js');
    // A second copy of the module, as a user's --tools module with its own taskrail would load.
    const copy = (await import(
      `../../src/task/errors.js?copy=${Date.now()}`
    )) as typeof import('../../src/task/errors.js');
    const foreign = new copy.RpcError(-32001, 'from the other copy', { x: 1 });
    assert.equal(foreign instanceof RpcError, false);
    assert.equal(isRpcError(foreign), true);
    assert.deepEqual(rpcErrorObject(foreign), {
      code: -32001,
      message: 'from the other copy',
      data: { x: 1 },
    });
    assert.equal(isRpcError(Object.assign(new Error('look-alike'), { code: -32001 })), false);
  });
  it('recognises a TaskrailError of another copy by the same brand, not by its name', async () => {
    const { TaskrailError, isStoreUnavailable } = await import('../../src/task/errors.js');
    const copy = (await import(
      `../../src/task/errors.js?copy=taskrail-${Date.now()}`
    )) as typeof import('../../src/task/errors.js');
    const foreign = new copy.TaskrailError('STORE_UNAVAILABLE', 'locked');
    assert.equal(foreign instanceof TaskrailError, false);
    assert.equal(isStoreUnavailable(foreign), true);
    assert.equal(isStoreUnavailable(new copy.TaskrailError('CONFIG', 'no')), false);
    const lookAlike = Object.assign(new Error('named only'), {
      name: 'TaskrailError',
      code: 'STORE_UNAVAILABLE',
    });
    assert.equal(isStoreUnavailable(lookAlike), false);
    // An RpcError is not a TaskrailError, whatever its code.
    assert.equal(isStoreUnavailable(new copy.RpcError(-32603, 'x')), false);
  });
});
