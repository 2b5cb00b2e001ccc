import assert from 'node:assert/strict';
import {
  cancel,
  complete,
  fail,
  answerInput,
  report,
  requestInput,
} from '../../task/transitions.js';
import type { TaskRecord } from '../../task/record.js';
import type { DefineCase, Harness } from './harness.js';
import { RPC } from '../../task/errors.js';
import { merged } from '../../task/copy.js';

const RICH_ARGUMENTS = {
  text: 'héllo wörld ✓ 𝄞 "quoted" \\ back\nslash',
  number: 12.5,
  negative: -3,
  flag: false,
  nothing: null,
  list: [1, 'two', { three: [3] }, []],
  nested: { deep: { deeper: { deepest: true } }, empty: {} },
};

async function write(h: Harness, next: TaskRecord): Promise<TaskRecord> {
  const outcome = await h.store.compareAndSet(next, next.revision - 1);
  assert.ok(outcome.ok, `write to revision ${next.revision} should succeed`);
  assert.deepEqual(outcome.task, next);
  assert.deepEqual(await h.store.get(next.id), next);
  return outcome.task;
}

export function registerBasicCases(define: DefineCase): void {
  define('create then get returns the same record, every field', async (h) => {
    const record = h.record({
      principal: 'carol@example.com',
      tool: 'confirm_delete',
      arguments: RICH_ARGUMENTS,
      ttlMs: null,
      pollIntervalMs: 1234.5,
      wire: '2025-11-25',
      idempotencyKey: 'key-1',
      meta: { session: 'abc', capabilities: { elicitation: {} }, n: [1, 2] },
      statusMessage: 'Queued',
    });
    const outcome = await h.store.create(record);
    assert.equal(outcome.created, true);
    assert.deepEqual(outcome.task, record);
    assert.deepEqual(await h.store.get(record.id), record);
  });

  define('every field survives each kind of write', async (h) => {
    let task = await h.create({ arguments: RICH_ARGUMENTS });
    task = await write(h, report(task, 'Step 1 of 3', h.clock.advance(5)));
    const question = { method: 'elicitation/create', params: { message: 'Sure?', schema: {} } };
    task = await write(h, requestInput(task, { confirm: question }, h.clock.advance(5), 'Asking'));
    task = await write(h, answerInput(task, { confirm: { action: 'accept' } }, h.clock.now()).task);
    assert.equal(task.status, 'working');
    const result = { content: [{ type: 'text', text: 'done ✓' }], structuredContent: { n: 1.5 } };
    await write(h, complete(task, result, h.clock.advance(5)));

    const failing = await h.create();
    const error = { code: RPC.INTERNAL_ERROR, message: 'boom', data: { why: ['x', null] } };
    await write(h, fail(failing, error, h.clock.advance(1)));
    await write(h, cancel(await h.create(), h.clock.advance(1)));
  });

  define('get of an unknown id is undefined', async (h) => {
    assert.equal(await h.store.get('no-such-task-id'), undefined);
  });

  define('create refuses a second task with the same id', async (h) => {
    const first = await h.create();
    const twin = { ...h.record({ tool: 'other' }), id: first.id };
    await assert.rejects(h.store.create(twin));
    assert.deepEqual(await h.store.get(first.id), first);
  });

  define('records handed out are copies of the stored ones', async (h) => {
    const record = h.record({ meta: { list: [1] } });
    const created = (await h.store.create(record)).task;
    created.meta.list = ['changed'];
    created.arguments.seconds = 99;
    record.meta.extra = true;
    const read = await h.store.get(record.id);
    assert.ok(read);
    assert.deepEqual(read.meta, { list: [1] });
    read.status = 'completed';
    assert.equal((await h.store.get(record.id))?.status, 'working');
  });

  define('big arguments are the same through every read, copy and write', async (h) => {
    // Past the size a store may parse only when they are read (SQLite: 16 KiB of JSON).
    const big = {
      long: 'ünïcode ✓ '.repeat(4000),
      rows: [...Array(500).keys()],
      ...RICH_ARGUMENTS,
    };
    const created = (await h.store.create(h.record({ arguments: big }))).task;
    assert.deepEqual(created.arguments, big);
    const read = (await h.store.get(created.id)) as TaskRecord;
    assert.deepEqual(read.arguments, big);
    assert.deepEqual(JSON.parse(JSON.stringify(read)).arguments, big);
    assert.deepEqual(structuredClone(read).arguments, big);
    assert.deepEqual(merged(read).arguments, big);
    (read.arguments['rows'] as number[]).push(-1);
    const replaced = (await h.store.get(created.id)) as TaskRecord;
    replaced.arguments = { replaced: true }; // before any read of them
    assert.deepEqual(replaced.arguments, { replaced: true });
    const untouched = (await h.store.get(created.id)) as TaskRecord;
    const forged = {
      ...report(untouched, 'half way', h.clock.advance(1)),
      arguments: { forged: 1 },
    };
    const outcome = await h.store.compareAndSet(forged, untouched.revision);
    assert.ok(outcome.ok);
    assert.deepEqual(outcome.task.arguments, big, 'the stored arguments, not the forged ones');
    assert.deepEqual((await h.store.get(created.id))?.arguments, big);
  });

  define('tasks, steps and leases survive closing and reopening the store', async (h) => {
    const reopen = h.reopen;
    if (reopen === undefined)
      return h.skip('the fixture has no reopen: its data lives in the instance');
    const task = await h.create({ arguments: RICH_ARGUMENTS });
    const reported = await write(h, report(task, 'half way', h.clock.advance(1)));
    await h.store.saveStep(task.id, 'fetch', { rows: [1, 2, 3] });
    const lease = await h.store.claim(task.id, 'worker-1', 60_000);
    assert.ok(lease);
    const store = await reopen();
    assert.deepEqual(await store.get(task.id), reported);
    assert.deepEqual(await store.loadSteps(task.id), { fetch: { rows: [1, 2, 3] } });
    assert.equal(await store.claim(task.id, 'worker-2', 60_000), undefined, 'lease still held');
    assert.equal((await store.renewLease(task.id, lease.token, 60_000)).held, true);
  });
}
