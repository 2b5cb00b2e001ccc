import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  createTaskSessionFromClient,
  resultFromTaskOutcome,
  type JsonRpcResponse,
  type TaskEnabledSession,
} from '@modelcontextprotocol/ext-tasks/client';
import { TaskrailClient } from '../../src/client/index.js';
import { createHttpDispatch } from '../../src/client/rpc-http.js';
import { waitFor } from '../helpers/wait.js';
import { getTask, rpc } from '../server/support.js';
import {
  callAsTask,
  EVERYTHING,
  startInProcess,
  textOf,
  waitForTask,
  type RunningProxyServer,
} from './support.js';

const INFO = { name: 'proxy-ext-tasks', version: '1.0.0' };
const TOKENS = { 'tok-a': 'alice', 'tok-b': 'bob' };

function firstText(result: unknown): string {
  return (result as { content?: { text?: string }[] }).content?.[0]?.text ?? '';
}

/** The official ext-tasks client, taskrail's own client and two principals, through the proxy. */
describe('clients and principals through the proxy (server-everything on stdio)', () => {
  let proxy: RunningProxyServer;
  let client: Client;
  let session: TaskEnabledSession;
  let home: string;

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'taskrail-proxy-home-'));
    proxy = await startInProcess(
      { upstream: { kind: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'] } },
      { auth: TOKENS },
    );
    const headers = { authorization: 'Bearer tok-a' };
    client = new Client(INFO, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(proxy.url), { requestInit: { headers } }),
    );
    const dispatch = createHttpDispatch({ url: proxy.url, bearer: 'tok-a' });
    session = createTaskSessionFromClient(client, {
      endpointId: proxy.url,
      rawDispatch: (request, options) => dispatch(request, options) as Promise<JsonRpcResponse>,
      v2RequestFraming: {
        protocolVersion: '2026-07-28',
        clientInfo: INFO,
        clientCapabilities: { elicitation: {} },
      },
      onInputRequest: () =>
        Promise.resolve({ action: 'accept', content: { name: 'Grace Hopper' } } as never),
    });
  });
  after(async () => {
    await client.close();
    await proxy.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('ext-tasks: a sum as a task', async () => {
    const execution = await session.callTool(
      'get-sum',
      { a: 5, b: 6 },
      { task: { preference: 'require' } },
    );
    assert.equal(execution.kind, 'task');
    const { outcome } = await execution.settle();
    assert.equal(outcome.status, 'completed');
    assert.equal(firstText(resultFromTaskOutcome(outcome)), 'The sum of 5 and 6 is 11.');
  });

  it("ext-tasks: answers the upstream's elicitation through onInputRequest", async () => {
    await waitFor('the elicitation tool to be listed', () =>
      proxy.proxy.tools.has('trigger-elicitation-request') ? true : undefined,
    );
    const execution = await session.callTool(
      'trigger-elicitation-request',
      {},
      { task: { preference: 'require' } },
    );
    const { outcome } = await execution.settle();
    assert.equal(outcome.status, 'completed');
    assert.match(JSON.stringify(resultFromTaskOutcome(outcome)), /Name: Grace Hopper/);
  });

  it("taskrail's client: a sum, recorded in its ledger", async () => {
    const host = new TaskrailClient({ url: proxy.url, bearer: 'tok-b', home, push: false });
    try {
      const call = await host.callTool('get-sum', { a: 1, b: 2 });
      const outcome = await call.result();
      assert.equal(outcome.kind, 'completed');
      assert.ok(call.taskId !== undefined);
      assert.match(JSON.stringify(outcome), /The sum of 1 and 2 is 3\./);
    } finally {
      host.close();
    }
  });

  it("never shows one principal's task to another", async () => {
    const taskId = await callAsTask(proxy.url, 'get-sum', { a: 3, b: 4 }, { bearer: 'tok-a' });
    const done = await waitForTask(proxy.url, taskId, ['completed'], 20_000, { bearer: 'tok-a' });
    assert.equal(textOf(done), 'The sum of 3 and 4 is 7.');
    const other = await rpc(proxy.url, 'tasks/get', { taskId }, { bearer: 'tok-b' });
    assert.equal(other.body.result, undefined);
    assert.match(JSON.stringify(other.body.error), /not found/i);
    const anonymous = await rpc(proxy.url, 'tasks/get', { taskId });
    assert.equal(anonymous.status, 401);
  });

  it('restarts a stdio upstream child that died, and keeps serving', async () => {
    const children = () =>
      execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' })
        .split('\n')
        .filter((line) => line.includes('server-everything'))
        .map((line) => Number(line.trim().split(/\s+/)[0]));
    const before = children();
    assert.ok(before.length > 0, 'the proxy runs server-everything children');
    for (const pid of before) process.kill(pid, 'SIGKILL');
    // One child is the control session's, the others the call pool's: wait until the proxy
    // saw every one of them go.
    const count = (pattern: RegExp) =>
      proxy.logger.lines.filter((line) => pattern.test(String(line['message']))).length;
    await waitFor(
      'the proxy to notice its upstream children died',
      () =>
        count(/reconnecting/) >= 1 && count(/an upstream connection closed/) >= before.length - 1
          ? true
          : undefined,
      { timeoutMs: 10_000 },
    );
    const taskId = await callAsTask(proxy.url, 'get-sum', { a: 9, b: 9 }, { bearer: 'tok-a' });
    const done = await waitForTask(proxy.url, taskId, ['completed', 'failed'], 30_000, {
      bearer: 'tok-a',
    });
    assert.equal(textOf(done), 'The sum of 9 and 9 is 18.', JSON.stringify(done));
    const after = children();
    assert.ok(after.length > 0 && after.every((pid) => !before.includes(pid)), 'new children');
    assert.equal((await getTask(proxy.url, taskId, { bearer: 'tok-a' }))['status'], 'completed');
  });
});
