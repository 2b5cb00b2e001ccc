import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  DetailedTaskV2Schema,
  TaskStatusNotificationV2Schema,
} from '@modelcontextprotocol/ext-tasks/core/v2';
import { listenStats } from '../../src/server/listen/index.js';
import { waitFor } from '../helpers/wait.js';
import {
  ackOf,
  getTask,
  notificationsOf,
  openListen,
  rpc,
  startApp,
  startHold,
  SUB_ID,
  type TestApp,
} from './support.js';

type Json = Record<string, unknown>;
const TOKENS = { 'tok-alice': 'alice', 'tok-bob': 'bob' };

function withoutMeta(value: Json): Json {
  const { _meta: _ignored, resultType: _rt, ...rest } = value;
  return rest;
}

describe('subscriptions/listen with taskIds: the server side', () => {
  let t: TestApp;
  before(
    async () =>
      (t = await startApp({
        tokens: TOKENS,
        listen: { maxSubscriptionsPerPrincipal: 3, maxTaskIdsPerSubscription: 5 },
      })),
  );
  after(() => t.close());

  it('acknowledges first, then streams tasks/get-shaped states until terminal, then ends with the listen result', async () => {
    const id = await startHold(t.url, 'shape', 'tok-alice');
    const listen = await openListen(t.url, [id, 'no-such-task-000'], {
      bearer: 'tok-alice',
      id: 'listen-shape',
    });
    assert.equal(listen.status, 200);
    await waitFor('the initial state', () => notificationsOf(listen).length >= 1);
    const ack = listen.messages[0] as Json;
    assert.equal(ack['method'], 'notifications/subscriptions/acknowledged');
    const ackParams = ack['params'] as Json;
    assert.deepEqual(ackParams['notifications'], { taskIds: [id] });
    assert.equal((ackParams['_meta'] as Json)[SUB_ID], 'listen-shape');

    t.gates.release('shape', 'shape done');
    await listen.ended;
    const notes = notificationsOf(listen);
    const last = notes.at(-1) as Json;
    for (const note of notes) {
      assert.ok(TaskStatusNotificationV2Schema.safeParse(note).success, JSON.stringify(note));
      const params = note['params'] as Json;
      assert.equal((params['_meta'] as Json)[SUB_ID], 'listen-shape');
      assert.ok(DetailedTaskV2Schema.safeParse(withoutMeta(params)).success);
    }
    const now = await getTask(t.url, id, 'tok-alice');
    assert.deepEqual(withoutMeta(last['params'] as Json), withoutMeta(now));
    assert.equal((last['params'] as Json)['status'], 'completed');
    const final = listen.messages.at(-1) as Json;
    assert.equal(final['id'], 'listen-shape');
    assert.equal((final['result'] as Json)['resultType'], 'complete');
    assert.equal(((final['result'] as Json)['_meta'] as Json)[SUB_ID], 'listen-shape');
  });

  it("never acknowledges or streams another principal's tasks", async () => {
    const alices = await startHold(t.url, 'private', 'tok-alice');
    const bobs = await startHold(t.url, 'bobs', 'tok-bob');
    const onlyForeign = await openListen(t.url, [alices], { bearer: 'tok-bob' });
    await onlyForeign.ended;
    assert.deepEqual((ackOf(onlyForeign)?.['params'] as Json)['notifications'], { taskIds: [] });
    assert.equal(notificationsOf(onlyForeign).length, 0);

    const mixed = await openListen(t.url, [alices, bobs], { bearer: 'tok-bob' });
    await waitFor('bob sees his own task', () => notificationsOf(mixed).length >= 1);
    assert.deepEqual((ackOf(mixed)?.['params'] as Json)['notifications'], { taskIds: [bobs] });
    t.gates.release('private');
    await waitFor(
      'alice sees hers completed',
      async () => (await getTask(t.url, alices, 'tok-alice'))['status'] === 'completed',
    );
    t.gates.release('bobs');
    await mixed.ended;
    const ids = notificationsOf(mixed).map((n) => (n['params'] as Json)['taskId']);
    assert.ok(ids.length >= 2 && ids.every((x) => x === bobs), JSON.stringify(ids));
  });

  it('sends -32021 (HTTP 400) when the request does not declare the extension', async () => {
    const id = await startHold(t.url, 'undeclared', 'tok-alice');
    const listen = await openListen(t.url, [id], { bearer: 'tok-alice', declare: false });
    assert.equal(listen.status, 400);
    const error = listen.error?.['error'] as Json;
    assert.equal(error['code'], -32021);
    assert.deepEqual(error['data'], {
      requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } },
    });
    t.gates.release('undeclared');
  });

  it('checks the routing headers like every 2026-07-28 request (-32020)', async () => {
    const res = await fetch(t.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/list',
        authorization: 'Bearer tok-alice',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 9,
        method: 'subscriptions/listen',
        params: {
          notifications: { taskIds: [] },
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {
              extensions: { 'io.modelcontextprotocol/tasks': {} },
            },
          },
        },
      }),
    });
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as { error: { code: number } }).error.code, -32020);
  });

  it('refuses malformed taskIds and too many ids (-32602, HTTP 400)', async () => {
    const bad = await openListen(t.url, 'not-a-list', { bearer: 'tok-alice' });
    assert.equal(bad.status, 400);
    assert.equal((bad.error?.['error'] as Json)['code'], -32602);
    const many = await openListen(t.url, ['a', 'b', 'c', 'd', 'e', 'f'], { bearer: 'tok-alice' });
    assert.equal(many.status, 400);
    assert.deepEqual(((many.error?.['error'] as Json)['data'] as Json)['maxTaskIds'], 5);
  });

  it('limits open streams per principal (HTTP 429) and frees the slot on disconnect', async () => {
    const ids = [await startHold(t.url, 'l1', 'tok-bob'), await startHold(t.url, 'l2', 'tok-bob')];
    const open = await Promise.all(
      [1, 2, 3].map(() => openListen(t.url, ids, { bearer: 'tok-bob' })),
    );
    await waitFor('three streams acknowledged', () => open.every((l) => ackOf(l) !== undefined));
    const refused = await openListen(t.url, ids, { bearer: 'tok-bob' });
    assert.equal(refused.status, 429);
    assert.match(String((refused.error?.['error'] as Json)['message']), /at most 3/);
    const other = await openListen(t.url, [], { bearer: 'tok-alice' });
    assert.equal(other.status, 200, 'another principal has its own quota');
    (open[0] as { close(): void }).close();
    await waitFor('the slot is free again', async () => {
      const again = await openListen(t.url, ids, { bearer: 'tok-bob' });
      again.close();
      return again.status === 200;
    });
    for (const l of open) l.close();
    t.gates.release('l1');
    t.gates.release('l2');
    await waitFor(
      'every stream is cleaned up',
      () => listenStats(t.app.runtime).subscriptions === 0,
    );
    assert.equal(listenStats(t.app.runtime).routedTasks, 0);
  });

  it('streams a cancel made by another request, and ends when the task is deleted', async () => {
    const a = await startHold(t.url, 'to-cancel', 'tok-alice');
    const b = await startHold(t.url, 'to-delete', 'tok-alice');
    const listen = await openListen(t.url, [a, b], { bearer: 'tok-alice' });
    await waitFor('both initial states', () => notificationsOf(listen).length >= 2);
    await rpc(t.url, 'tasks/cancel', { taskId: a }, { bearer: 'tok-alice', name: a });
    await waitFor('the cancel is streamed', () =>
      notificationsOf(listen).some((n) => (n['params'] as Json)['status'] === 'cancelled'),
    );
    assert.equal(listen.done, false, 'one task is still live');
    t.app.store.events.emit('task:deleted', { id: b });
    await listen.ended;
    assert.equal((listen.messages.at(-1) as Json)['id'] !== undefined, true);
    t.gates.release('to-delete');
  });

  it('sends SSE comment keep-alives on a quiet stream', async () => {
    const quiet = await startApp({ listen: { keepAliveMs: 30 } });
    try {
      const id = await startHold(quiet.url, 'quiet');
      const res = await fetch(quiet.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'subscriptions/listen',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'subscriptions/listen',
          params: {
            notifications: { taskIds: [id] },
            _meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientCapabilities': {
                extensions: { 'io.modelcontextprotocol/tasks': {} },
              },
            },
          },
        }),
      });
      assert.equal(res.headers.get('content-type'), 'text/event-stream');
      let text = '';
      const decoder = new TextDecoder();
      for await (const chunk of res.body as ReadableStream<Uint8Array>) {
        text += decoder.decode(chunk, { stream: true });
        if (text.includes(': keep-alive')) break;
      }
      assert.match(text, /^: keep-alive$/m);
      quiet.gates.release('quiet');
    } finally {
      await quiet.close();
    }
  });

  it('leaves core-only listen filters to the SDK', async () => {
    const res = await fetch(t.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'subscriptions/listen',
        authorization: 'Bearer tok-alice',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'core',
        method: 'subscriptions/listen',
        params: {
          notifications: { toolsListChanged: true },
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    });
    const controller = new AbortController();
    const decoder = new TextDecoder();
    let text = '';
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    while (!text.includes('acknowledged')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    controller.abort();
    await reader.cancel();
    assert.match(text, /notifications\/subscriptions\/acknowledged/);
    assert.doesNotMatch(text, /taskIds|dev\.taskrail/);
  });
});
