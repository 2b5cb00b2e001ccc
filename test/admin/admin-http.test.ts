import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTaskServer } from '../../src/server/app.js';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import { newTaskRecord } from '../../src/task/record.js';
import { waitFor } from '../helpers/wait.js';
import {
  ADMIN,
  CALLER,
  VIEWER,
  call,
  followEvents,
  startHarness,
  type Harness,
  type Loose,
} from './harness.js';

describe('admin HTTP face', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  const statusOf = async (id: string) => (await h.store.get(id))?.status;

  it('opens the API and /metrics to admin tokens only', async () => {
    for (const path of [
      '/metrics',
      '/dashboard/api/tasks',
      '/dashboard/api/me',
      '/dashboard/api/events',
    ]) {
      for (const token of [undefined, CALLER, 'not-a-token']) {
        const { status } = await call(h.base, path, token);
        assert.equal(status, 401, `${path} with ${token ?? 'no token'}`);
      }
    }
    assert.equal((await call(h.base, '/metrics', ADMIN)).status, 200);
    assert.deepEqual((await call(h.base, '/dashboard/api/me', VIEWER)).body, {
      name: 'viewer',
      canAnswer: false,
      canCancel: true,
    });
  });

  it('never lets an admin token act as a caller', async () => {
    const { status } = await call(h.base, '/mcp', ADMIN, { method: 'POST', body: {} });
    assert.equal(status, 401);
  });

  it('serves the page shell, which holds no data, without a token', async () => {
    const page = await call(h.base, '/dashboard');
    assert.equal(page.status, 200);
    assert.match(page.body as string, /operator dashboard/);
    assert.equal((await call(h.base, '/dashboard/app.js')).status, 200);
  });

  it('refuses an admin token that is also a caller token', () => {
    const store = h.store;
    assert.throws(
      () =>
        createTaskServer({
          store,
          auth: { tokens: { shared: 'alice' } },
          admin: { tokens: { shared: 'ops' } },
        }),
      /also a caller/,
    );
  });

  it('lists every principal’s tasks and filters by status, tool and principal', async () => {
    const quick = await h.create('quick', {}, 'bob');
    const gated = await h.create('gate', { key: 'list' }, 'alice');
    await waitFor('quick to complete', async () => (await statusOf(quick.id)) === 'completed');
    const ids = async (query: string) =>
      (
        (await call(h.base, `/dashboard/api/tasks${query}`, ADMIN)).body.tasks as { id: string }[]
      ).map((t) => t.id);
    const all = await ids('');
    assert.ok(all.includes(quick.id) && all.includes(gated.id));
    assert.deepEqual(await ids(`?principal=bob&tool=quick`), [quick.id]);
    assert.ok(!(await ids('?status=working')).includes(quick.id));
    assert.ok((await ids('?status=working&tool=gate')).includes(gated.id));
    assert.equal((await call(h.base, '/dashboard/api/tasks?status=bogus', ADMIN)).status, 400);
    h.open('list');
  });

  it('filters completed and tool_error apart, as the badges and /metrics tell them', async () => {
    const done = await h.create('quick', {}, 'erin');
    const broken = await h.create('oops', {}, 'erin');
    for (const task of [done, broken]) {
      await waitFor('the task to end', async () => (await statusOf(task.id)) === 'completed');
    }
    const listed = async (status: string) =>
      (
        (await call(h.base, `/dashboard/api/tasks?principal=erin&status=${status}`, ADMIN)).body
          .tasks as { id: string; outcome: string }[]
      ).map((t) => `${t.id} ${t.outcome}`);
    assert.deepEqual(await listed('tool_error'), [`${broken.id} tool_error`]);
    assert.deepEqual(await listed('completed'), [`${done.id} completed`]);
    assert.equal((await listed('completed,tool_error')).length, 2);
  });

  it('shows a task with its result and the timeline recorded from store events', async () => {
    const task = await h.create('quick');
    await waitFor('completion', async () => (await statusOf(task.id)) === 'completed');
    const { status, body } = await call(h.base, `/dashboard/api/tasks/${task.id}`, ADMIN);
    assert.equal(status, 200);
    assert.equal(body.timelineSource, 'events');
    assert.equal(body.wire, '2026-07-28');
    assert.deepEqual(body.result.content, [{ type: 'text', text: 'quick done' }]);
    const kinds = (body.timeline as { kind: string; status: string }[]).map(
      (e) => `${e.kind}:${e.status}`,
    );
    assert.deepEqual([kinds[0], kinds.at(-1)], ['created:working', 'status:completed']);
    assert.equal((await call(h.base, '/dashboard/api/tasks/unknown-id', ADMIN)).status, 404);
  });

  it('streams task changes as they happen', async () => {
    const events = await followEvents(h.base, ADMIN);
    try {
      assert.equal(events.status, 200);
      const task = await h.create('gate', { key: 'sse' });
      await waitFor('the working row', () =>
        events.frames.find(
          (f) => f.event === 'task' && f.data.id === task.id && f.data.status === 'working',
        ),
      );
      h.open('sse');
      await waitFor('the completed row', () =>
        events.frames.find((f) => f.data.id === task.id && f.data.status === 'completed'),
      );
    } finally {
      await events.close();
    }
  });

  it('re-lists to catch tasks another process wrote to the SQLite file', async () => {
    const events = await followEvents(h.base, ADMIN);
    const other = new SqliteTaskStore(h.dbPath);
    try {
      const record = newTaskRecord(
        {
          id: 'written-by-another-process-0001',
          principal: 'carol',
          tool: 'elsewhere',
          arguments: {},
          ttlMs: 60_000,
          pollIntervalMs: 1000,
        },
        Date.now(),
      );
      await other.create(record);
      await waitFor('the other process’s task', () =>
        events.frames.find((f) => f.event === 'task' && f.data.id === record.id),
      );
      const detail = await call(h.base, `/dashboard/api/tasks/${record.id}`, ADMIN);
      assert.equal(detail.body.principal, 'carol');
    } finally {
      await events.close();
      await other.close();
    }
  });

  it('cancels a running task for an operator, once', async () => {
    const task = await h.create('gate', { key: 'never' });
    await waitFor('it to run', async () =>
      (await h.store.get(task.id))?.statusMessage?.includes('gate'),
    );
    const first = await call(h.base, `/dashboard/api/tasks/${task.id}/cancel`, VIEWER, {
      method: 'POST',
    });
    assert.equal(first.status, 200);
    assert.equal(first.body.task.status, 'cancelled');
    const stored = await h.store.get(task.id);
    assert.equal(stored?.statusMessage, 'Cancelled by operator viewer.');
    const again = await call(h.base, `/dashboard/api/tasks/${task.id}/cancel`, ADMIN, {
      method: 'POST',
    });
    assert.equal(again.status, 409);
  });

  it('answers a parked task’s input on the caller’s behalf when the token may', async () => {
    const task = await h.create('ask');
    await waitFor('it to park', async () => (await statusOf(task.id)) === 'input_required');
    const detail = await call(h.base, `/dashboard/api/tasks/${task.id}`, ADMIN);
    assert.deepEqual(Object.keys(detail.body.pendingInputRequests), ['confirm']);
    const body = { inputResponses: { confirm: { action: 'accept', content: { ok: true } } } };
    const path = `/dashboard/api/tasks/${task.id}/answer`;
    assert.equal((await call(h.base, path, VIEWER, { method: 'POST', body })).status, 403);
    const answered = await call(h.base, path, ADMIN, { method: 'POST', body });
    assert.equal(answered.status, 200);
    assert.deepEqual(answered.body.accepted, ['confirm']);
    await waitFor('completion', async () => (await statusOf(task.id)) === 'completed');
    const done = await h.store.get(task.id);
    assert.deepEqual(done?.result?.['content'], [{ type: 'text', text: 'answer: accept' }]);
    assert.equal((await call(h.base, path, ADMIN, { method: 'POST', body })).status, 409);
    const shown = await call(h.base, `/dashboard/api/tasks/${task.id}`, ADMIN);
    const answers = (shown.body.timeline as Loose[]).filter((e) => e.kind === 'answer');
    assert.equal(answers.length, 1);
    assert.deepEqual(answers[0].by, { role: 'operator', name: 'ops' });
    assert.equal(answers[0].key, 'confirm');
    assert.deepEqual(JSON.parse(answers[0].answer), body.inputResponses.confirm);
  });

  it('puts an answer from the caller in the timeline under the caller’s name', async () => {
    const task = await h.create('ask', {}, 'alice');
    await waitFor('it to park', async () => (await statusOf(task.id)) === 'input_required');
    const long = 'x'.repeat(500);
    await h.app.runtime.answerInput(task.id, 'alice', {
      confirm: { action: 'accept', content: { ok: true }, _meta: { note: long } },
    });
    await waitFor('completion', async () => (await statusOf(task.id)) === 'completed');
    const shown = await call(h.base, `/dashboard/api/tasks/${task.id}`, ADMIN);
    const timeline = shown.body.timeline as Loose[];
    const answer = timeline.find((e) => e.kind === 'answer');
    assert.deepEqual(answer.by, { role: 'caller', name: 'alice' });
    assert.ok(answer.answer.length <= 200, 'long answers are shortened');
    const resumed = timeline.findIndex((e) => e.from === 'input_required');
    assert.ok(timeline.indexOf(answer) < resumed, 'the answer comes before the resume');
  });
});
