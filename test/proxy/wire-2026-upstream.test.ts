import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startNode, type Child } from '../helpers/child.js';
import { rpc } from '../server/support.js';
import {
  callAsTask,
  startInProcess,
  textOf,
  waitForTask,
  type RunningProxyServer,
} from './support.js';
import { rawInitialize } from '../helpers/raw-session.js';

const UPSTREAM = resolve(new URL('./fixtures/wire-2026-upstream.js', import.meta.url).pathname);

/** An upstream that refuses `initialize` (SDK v2, 2026-07-28 only) behind an in-process proxy. */
describe('proxy in front of a 2026-07-28-only upstream (Streamable HTTP)', () => {
  let upstream: Child;
  let proxy: RunningProxyServer;
  const calls = (name: string) => upstream.lines.filter((line) => line === `called ${name}`).length;

  before(async () => {
    upstream = startNode(UPSTREAM, []);
    const url = (await upstream.line(/^listening (\S+)/, 20_000))[1] as string;
    const refused = await rawInitialize(url);
    assert.ok(refused.status >= 400, `the fixture must refuse initialize (got ${refused.status})`);
    proxy = await startInProcess({ upstream: { kind: 'http', url: new URL(url), headers: {} } });
  });
  after(async () => {
    await proxy?.close();
    await upstream?.kill('SIGTERM');
  });

  it('lists its tools and says which protocol it speaks', async () => {
    const reply = await rpc(proxy.url, 'tools/list', {});
    const names = ((reply.body.result?.['tools'] ?? []) as { name: string }[]).map((t) => t.name);
    assert.deepEqual(names.sort(), ['add', 'ask-name']);
    assert.ok(proxy.logger.lines.some((line) => /2026-07-28 only/.test(String(line['message']))));
  });

  it('runs a call as a task, calling the upstream once', async () => {
    const task = await callAsTask(proxy.url, 'add', { a: 2, b: 3 });
    assert.equal(textOf(await waitForTask(proxy.url, task, ['completed', 'failed'])), '2 + 3 = 5');
    assert.equal(calls('add'), 1);
  });

  it("parks on the upstream's input request and sends the tasks/update answer back", async () => {
    const task = await callAsTask(proxy.url, 'ask-name', {});
    const parked = await waitForTask(proxy.url, task, ['input_required', 'failed']);
    assert.equal(parked['status'], 'input_required');
    const requests = parked['inputRequests'] as Record<string, { params?: { message?: string } }>;
    const [key, request] = Object.entries(requests)[0] ?? [];
    assert.equal(request?.params?.message, 'Who is there?');
    await rpc(proxy.url, 'tasks/update', {
      taskId: task,
      inputResponses: { [key as string]: { action: 'accept', content: { name: 'Ada' } } },
    });
    const done = await waitForTask(proxy.url, task, ['completed', 'failed']);
    assert.equal(textOf(done), 'Hello, Ada!');
    assert.equal(calls('ask-name'), 1);
  });
});
