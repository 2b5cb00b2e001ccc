import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startNode, type Child } from '../helpers/child.js';
import { startServing } from '../helpers/taskrail.js';
import { waitFor } from '../helpers/wait.js';
import { getTask, rpc } from '../server/support.js';
import { callAsTask, CLI, textOf, waitForTask } from './support.js';

const UPSTREAM = resolve(
  new URL('./fixtures/wire-2026-task-upstream.js', import.meta.url).pathname,
);

interface ProxyProcess {
  child: Child;
  url: string;
}

/**
 * `taskrail proxy` (the CLI) in front of an upstream that speaks only 2026-07-28 and answers
 * with tasks of its own (the tasks extension, served by taskrail itself behind a front that
 * refuses `initialize`). The upstream prints each `tools/call` it receives and each start of a
 * tool's work, so the tests count both.
 */
describe('proxy following 2026-07-28 upstream tasks (tasks extension)', () => {
  let upstream: Child;
  let upstreamUrl: string;
  let dir: string;
  let proxy: ProxyProcess;
  const count = (line: string) => upstream.lines.filter((l) => l === line).length;

  const startProxy = async (): Promise<ProxyProcess> => {
    const args = ['proxy', '--port', '0', '--store', `sqlite:${join(dir, 'tasks.db')}`];
    args.push('--upstream', upstreamUrl, '--log-level', 'info');
    return startServing(args, { main: CLI });
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'taskrail-proxy-2026-'));
    upstream = startNode(UPSTREAM, []);
    upstreamUrl = (await upstream.line(/^listening (\S+)/, 20_000))[1] as string;
    proxy = await startProxy();
  });
  after(async () => {
    await proxy?.child.kill('SIGTERM');
    await upstream?.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  it('reaches the upstream with the 2026-07-28 client and runs a call as an upstream task', async () => {
    assert.match(proxy.child.stderr(), /2026-07-28 only/);
    const taskId = await callAsTask(proxy.url, 'slow-add', { a: 2, b: 3, ms: 300 });
    const done = await waitForTask(proxy.url, taskId, ['completed', 'failed']);
    assert.equal(textOf(done), '2 + 3 = 5', JSON.stringify(done));
    assert.equal(count('tools/call slow-add'), 1);
    assert.equal(count('ran slow-add'), 1);
  });

  it("parks on the upstream task's input request; the tasks/update answer goes to its tasks/update", async () => {
    const taskId = await callAsTask(proxy.url, 'ask-name', {});
    const parked = await waitForTask(proxy.url, taskId, ['input_required', 'failed']);
    assert.equal(parked['status'], 'input_required', JSON.stringify(parked));
    const requests = parked['inputRequests'] as Record<string, { params?: { message?: string } }>;
    const [key, request] = Object.entries(requests)[0] ?? [];
    assert.equal(request?.params?.message, 'Who is there?');
    const update = await rpc(proxy.url, 'tasks/update', {
      taskId,
      inputResponses: { [key as string]: { action: 'accept', content: { name: 'Ada' } } },
    });
    assert.equal(update.body.error, undefined, JSON.stringify(update.body));
    const done = await waitForTask(proxy.url, taskId, ['completed', 'failed']);
    assert.equal(textOf(done), 'Hello, Ada!', JSON.stringify(done));
    assert.equal(count('tools/call ask-name'), 1);
    assert.equal(count('ran ask-name'), 1);
  });

  it('tasks/cancel on the proxy cancels the upstream task', async () => {
    const taskId = await callAsTask(proxy.url, 'wait-for-cancel', {});
    // Relayed status: the proxy holds the upstream task id (a cancel before the upstream's
    // CreateTaskResult arrives can only abort the request; see docs/proxy.md).
    await waitFor(
      'the upstream task to be followed',
      async () => ((await getTask(proxy.url, taskId))['statusMessage'] ? true : undefined),
      { timeoutMs: 20_000, intervalMs: 20 },
    );
    await rpc(proxy.url, 'tasks/cancel', { taskId });
    await upstream.line(/^cancelled wait-for-cancel$/, 20_000);
    assert.equal((await getTask(proxy.url, taskId))['status'], 'cancelled');
  });

  it('after kill -9 while following: the restarted proxy follows the same upstream task', async () => {
    const calls = count('tools/call slow-add');
    const runs = count('ran slow-add');
    const taskId = await callAsTask(proxy.url, 'slow-add', { a: 40, b: 2, ms: 4000 });
    // The upstream's status message relayed means its task id is on record (written first).
    await waitFor(
      'the upstream task to be followed',
      async () => ((await getTask(proxy.url, taskId))['statusMessage'] ? true : undefined),
      { timeoutMs: 20_000, intervalMs: 20 },
    );
    await proxy.child.kill('SIGKILL');
    proxy = await startProxy();
    const done = await waitForTask(proxy.url, taskId, ['completed', 'failed']);
    assert.equal(textOf(done), '40 + 2 = 42', JSON.stringify(done));
    assert.equal(count('tools/call slow-add'), calls + 1, 'the tool was not called again');
    assert.equal(count('ran slow-add'), runs + 1, 'the upstream ran the tool once');
  });

  it('after kill -9 while parked: the answer given to the restarted proxy reaches the upstream task', async () => {
    const taskId = await callAsTask(proxy.url, 'ask-name', {});
    const parked = await waitForTask(proxy.url, taskId, ['input_required', 'failed']);
    const key = Object.keys(parked['inputRequests'] as object)[0] as string;
    await proxy.child.kill('SIGKILL');
    proxy = await startProxy();
    await rpc(proxy.url, 'tasks/update', {
      taskId,
      inputResponses: { [key]: { action: 'accept', content: { name: 'Grace' } } },
    });
    const done = await waitForTask(proxy.url, taskId, ['completed', 'failed']);
    assert.equal(textOf(done), 'Hello, Grace!', JSON.stringify(done));
    assert.equal(count('tools/call ask-name'), 2, 'one call for each of the two ask-name tests');
    assert.equal(count('ran ask-name'), 2);
  });
});
