import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  MemoryLedger,
  TaskrailClient,
  type CallOutcome,
  type TaskEvent,
} from '../../src/client/index.js';
import { listenStats } from '../../src/server/listen/index.js';
import { waitFor } from '../helpers/wait.js';
import { startApp, type TestApp } from './support.js';

function textOf(outcome: CallOutcome): string {
  assert.equal(outcome.kind, 'completed', JSON.stringify(outcome));
  const result = (outcome as { result: { content: { text?: string }[] } }).result;
  return result.content.map((c) => c.text ?? '').join('');
}

/** A fetch that answers every listen request itself, like a server without task push. */
function interceptListen(answer: () => Response): typeof fetch {
  return async (input, init) => {
    const method = new Headers(init?.headers).get('mcp-method');
    return method === 'subscriptions/listen' ? answer() : fetch(input, init);
  };
}

describe('taskrail/client follows tasks over subscriptions/listen', () => {
  let t: TestApp;
  const clients: TaskrailClient[] = [];
  const client = (
    options: Partial<ConstructorParameters<typeof TaskrailClient>[0]> = {},
  ): TaskrailClient => {
    const c = new TaskrailClient({ url: t.url, ledger: new MemoryLedger(), ...options });
    clients.push(c);
    return c;
  };
  before(async () => (t = await startApp()));
  after(async () => {
    for (const c of clients) c.close();
    await t.close();
  });

  it('gets the outcome pushed, without a single tasks/get', async () => {
    const call = await client().callTool('hold', { key: 'push-1' });
    await waitFor(
      'the task is routed to a stream',
      () => listenStats(t.app.runtime).routedTasks === 1,
    );
    t.gates.release('push-1', 'pushed!');
    assert.equal(textOf(await call.result()), 'pushed!');
    assert.equal(t.getsFor(call.taskId as string), 0);
    await waitFor(
      'the stream ended with the task',
      () => listenStats(t.app.runtime).subscriptions === 0,
    );
  });

  it('answers input asked through a pushed input_required state', async () => {
    const c = client({
      input: { elicitation: async () => ({ action: 'accept', content: { name: 'Ada' } }) },
    });
    const call = await c.callTool('ask', {});
    assert.equal(textOf(await call.result()), 'Hello, Ada!');
    assert.equal(t.getsFor(call.taskId as string), 0);
  });

  it('sends at least 90% fewer tasks/get than a polling client for a 10-second task', async () => {
    const [polled, pushed] = await Promise.all([
      client({ push: false }).callTool('sleep', { ms: 10_000 }),
      client().callTool('sleep', { ms: 10_000 }),
    ]);
    const outcomes = await Promise.all([polled.result(), pushed.result()]);
    assert.deepEqual(outcomes.map(textOf), ['slept 10000', 'slept 10000']);
    const polling = t.getsFor(polled.taskId as string);
    const pushing = t.getsFor(pushed.taskId as string);
    process.stdout.write(
      `# tasks/get for a 10 s task: polling ${polling}, subscribed ${pushing}\n`,
    );
    assert.ok(polling >= 8, `the polling client polled ${polling} times`);
    assert.ok(pushing <= polling * 0.1, `subscribed ${pushing} vs polling ${polling}`);
  });

  it('a stream broken mid-task still ends with the right outcome (re-read, then re-subscribe)', async () => {
    const events: TaskEvent[] = [];
    const call = await client({ onEvent: (e) => events.push(e) }).callTool('hold', {
      key: 'break-1',
    });
    await waitFor('the initial state arrived by push', () =>
      events.some((e) => e.type === 'status'),
    );
    const seenBefore = events.filter((e) => e.type === 'status').length;
    assert.equal(t.cutStreams(), 1);
    // The state is read again: by tasks/get once the poll interval allows, or by the
    // re-subscription's initial state, whichever comes first.
    await waitFor(
      'a fresh state after the break',
      () => events.filter((e) => e.type === 'status').length > seenBefore,
    );
    await waitFor('re-subscribed', () => listenStats(t.app.runtime).routedTasks === 1);
    t.gates.release('break-1', 'after the break');
    assert.equal(textOf(await call.result()), 'after the break');
  });

  it('a break just as the task ends is caught by the re-read', async () => {
    const events: TaskEvent[] = [];
    const call = await client({ onEvent: (e) => events.push(e) }).callTool('hold', {
      key: 'break-2',
    });
    await waitFor('the initial state arrived by push', () =>
      events.some((e) => e.type === 'status'),
    );
    t.cutStreams();
    t.gates.release('break-2', 'ended during the break');
    assert.equal(textOf(await call.result()), 'ended during the break');
  });

  it('falls back to polling when the server answers the listen with -32601 / 404', async () => {
    const fetch404 = interceptListen(
      () =>
        new Response(
          JSON.stringify({
            jsonrpc: '2.0',
            id: null,
            error: { code: -32601, message: 'Method not found' },
          }),
          {
            status: 404,
            headers: { 'content-type': 'application/json' },
          },
        ),
    );
    const call = await client({ fetch: fetch404, defaultPollIntervalMs: 50 }).callTool('hold', {
      key: 'f404',
    });
    await waitFor('polling started', () => t.getsFor(call.taskId as string) > 0);
    t.gates.release('f404', 'polled');
    assert.equal(textOf(await call.result()), 'polled');
  });

  it('falls back to polling when the server closes the listen stream at once', async () => {
    const closing = interceptListen(
      () => new Response('', { status: 200, headers: { 'content-type': 'text/event-stream' } }),
    );
    const call = await client({ fetch: closing }).callTool('hold', { key: 'fclose' });
    await waitFor('polling started', () => t.getsFor(call.taskId as string) > 0);
    t.gates.release('fclose', 'polled too');
    assert.equal(textOf(await call.result()), 'polled too');
  });

  it('reads each listen stream to its end, so one connection serves call after call', async () => {
    const c = client({ background: false });
    await c.callTool('sleep', { ms: 1 });
    const before = t.connections();
    for (let i = 0; i < 5; i++)
      assert.equal((await c.callTool('sleep', { ms: 1 })).outcome?.kind, 'completed');
    assert.ok(t.connections() - before <= 1, `${t.connections() - before} new connections`);
  });

  it('refuses a malformed pushed result and reads the task with tasks/get instead', async () => {
    const malformed = async (input: string | URL | Request, init?: RequestInit) => {
      if (new Headers(init?.headers).get('mcp-method') !== 'subscriptions/listen')
        return fetch(input, init);
      const { id, params } = JSON.parse(String(init?.body)) as {
        id: string;
        params: { notifications: { taskIds: string[] } };
      };
      const taskId = params.notifications.taskIds[0];
      const meta = { 'io.modelcontextprotocol/subscriptionId': id };
      const times = { createdAt: 'a', lastUpdatedAt: 'b', ttlMs: null };
      const result = { content: [{ type: 'text', text: 7 }] };
      const messages = [
        {
          method: 'notifications/subscriptions/acknowledged',
          params: { _meta: meta, notifications: { taskIds: [taskId] } },
        },
        {
          method: 'notifications/tasks',
          params: { _meta: meta, taskId, status: 'completed', ...times, result },
        },
      ];
      const sse = messages.map((m) => `data: ${JSON.stringify({ jsonrpc: '2.0', ...m })}\n\n`);
      return new Response(sse.join(''), { headers: { 'content-type': 'text/event-stream' } });
    };
    const call = await client({ fetch: malformed as typeof fetch }).callTool('hold', {
      key: 'bad',
    });
    await waitFor('the task was read back', () => t.getsFor(call.taskId as string) > 0);
    t.gates.release('bad', 'the real result');
    assert.equal(textOf(await call.result()), 'the real result');
  });

  it('closes its streams when the watch stops', async () => {
    const c = client();
    const call = await c.callTool('hold', { key: 'detach' });
    await waitFor('streaming', () => listenStats(t.app.runtime).subscriptions === 1);
    call.detach();
    await waitFor('the stream is closed', () => listenStats(t.app.runtime).subscriptions === 0);
    t.gates.release('detach');
  });
});
