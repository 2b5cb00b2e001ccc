import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Child } from '../helpers/child.js';
import { startServing } from '../helpers/taskrail.js';
import { waitFor } from '../helpers/wait.js';
import { getTask, rpc } from '../server/support.js';
import {
  callAsTask,
  CLI,
  countingRelay,
  startEverythingHttp,
  textOf,
  waitForTask,
  type Relay,
} from './support.js';

interface ProxyProcess {
  child: Child;
  url: string;
}

/**
 * `taskrail proxy --upstream` (the CLI, as users run it) in front of server-everything's
 * Streamable HTTP mode, killed with SIGKILL mid-call and restarted on the same SQLite file.
 */
describe('taskrail proxy --upstream (server-everything over Streamable HTTP)', () => {
  let upstream: { url: string; child: Child };
  let relay: Relay;
  let dir: string;
  let proxy: ProxyProcess;

  const startProxy = async (retryTools = 'get-sum'): Promise<ProxyProcess> => {
    const args = ['proxy', '--port', '0', '--store', `sqlite:${join(dir, 'tasks.db')}`];
    args.push('--upstream', relay.url, '--upstream-header', 'X-Proxy-Test: yes');
    args.push('--retry-tools', retryTools, '--log-level', 'warn');
    return startServing(args, { main: CLI });
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'taskrail-proxy-http-'));
    upstream = await startEverythingHttp();
    relay = await countingRelay(upstream.url);
    proxy = await startProxy();
  });
  after(async () => {
    await proxy.child.kill('SIGTERM');
    await relay.close();
    await upstream.child.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('adds two numbers as a task', async () => {
    const taskId = await callAsTask(proxy.url, 'get-sum', { a: 20, b: 22 });
    const done = await waitForTask(proxy.url, taskId, ['completed', 'failed']);
    assert.equal(textOf(done), 'The sum of 20 and 22 is 42.');
    assert.ok(relay.headers.length > 0);
    assert.ok(
      relay.headers.every((h) => h['x-proxy-test'] === 'yes'),
      'header on every request',
    );
  });

  it("answers the research tool's clarification (an upstream task's elicitation) via tasks/update", async () => {
    const taskId = await callAsTask(proxy.url, 'simulate-research-query', {
      topic: 'python',
      ambiguous: true,
    });
    const parked = await waitForTask(proxy.url, taskId, ['input_required', 'completed', 'failed']);
    assert.equal(parked['status'], 'input_required', JSON.stringify(parked));
    const [key, request] = Object.entries(parked['inputRequests'] as object)[0] ?? [];
    assert.ok(key !== undefined);
    assert.match(JSON.stringify(request), /Monty Python comedy group/);
    const update = await rpc(proxy.url, 'tasks/update', {
      taskId,
      inputResponses: { [key]: { action: 'accept', content: { interpretation: 'snake' } } },
    });
    assert.equal(update.body.error, undefined, JSON.stringify(update.body));
    const done = await waitForTask(proxy.url, taskId, ['completed', 'failed']);
    assert.match(textOf(done), /# Research Report: python \(snake\)/);
  });

  it("turns the long-running operation's progress into statusMessage, and cancels it upstream", async () => {
    const cancelsBefore = relay.methods.filter((m) => m === 'notifications/cancelled').length;
    const taskId = await callAsTask(proxy.url, 'trigger-long-running-operation', {
      duration: 60,
      steps: 60,
    });
    const seen = await waitFor(
      'a progress statusMessage',
      async () => {
        const message = (await getTask(proxy.url, taskId))['statusMessage'];
        return typeof message === 'string' && /\d+\/60/.test(message) ? message : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 50 },
    );
    assert.match(seen, /\d+\/60/);
    const reply = await rpc(proxy.url, 'tasks/cancel', { taskId });
    assert.equal(reply.body.error, undefined, JSON.stringify(reply.body));
    assert.equal((await waitForTask(proxy.url, taskId, ['cancelled']))['status'], 'cancelled');
    await waitFor('the upstream to be sent notifications/cancelled', () =>
      relay.methods.filter((m) => m === 'notifications/cancelled').length > cancelsBefore
        ? true
        : undefined,
    );
  });

  it('parks on the elicitation tool and sends the tasks/update answer upstream', async () => {
    const taskId = await callAsTask(proxy.url, 'trigger-elicitation-request', {});
    const parked = await waitForTask(proxy.url, taskId, ['input_required', 'failed']);
    assert.equal(parked['status'], 'input_required', JSON.stringify(parked));
    const [key, request] = Object.entries(parked['inputRequests'] as object)[0] ?? [];
    assert.ok(key !== undefined);
    assert.match(JSON.stringify(request), /Your full, legal name/);
    const answer = { action: 'accept', content: { name: 'Grace Hopper', check: true } };
    const update = await rpc(proxy.url, 'tasks/update', {
      taskId,
      inputResponses: { [key]: answer },
    });
    assert.equal(update.body.error, undefined, JSON.stringify(update.body));
    const done = await waitForTask(proxy.url, taskId, ['completed', 'failed']);
    assert.match(textOf(done), /Name: Grace Hopper/);
  });

  it('after kill -9: follows the same upstream task again, fails a plain call "interrupted"', async () => {
    const longCalls = () =>
      relay.toolCalls.filter((n) => n === 'trigger-long-running-operation').length;
    const longCallsBefore = longCalls();
    const research = await callAsTask(proxy.url, 'simulate-research-query', { topic: 'lakes' });
    const plain = await callAsTask(proxy.url, 'trigger-long-running-operation', {
      duration: 30,
      steps: 30,
    });
    // A statusMessage from each means both upstream calls are under way (and the research
    // task's upstream id is recorded: the proxy writes it before any progress).
    await waitFor(
      'both calls to be under way',
      async () => {
        const tasks = await Promise.all([getTask(proxy.url, research), getTask(proxy.url, plain)]);
        return tasks.every((t) => typeof t['statusMessage'] === 'string') ? tasks : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 50 },
    );
    const researchCalls = relay.toolCalls.filter((n) => n === 'simulate-research-query').length;
    await proxy.child.kill('SIGKILL');
    proxy = await startProxy();
    const failed = await waitForTask(proxy.url, plain, ['completed', 'failed']);
    assert.equal(failed['status'], 'failed');
    assert.match(JSON.stringify(failed['error']), /interrupted/);
    const done = await waitForTask(proxy.url, research, ['completed', 'failed']);
    assert.equal(done['status'], 'completed', JSON.stringify(done));
    assert.match(textOf(done), /# Research Report: lakes/);
    // The restarted proxy followed the recorded upstream task instead of calling again.
    assert.equal(
      relay.toolCalls.filter((n) => n === 'simulate-research-query').length,
      researchCalls,
    );
    assert.equal(longCalls(), longCallsBefore + 1);
  });

  it('after kill -9: calls a --retry-tools tool again', async () => {
    await proxy.child.kill('SIGTERM');
    proxy = await startProxy('trigger-long-running-operation');
    const before = relay.toolCalls.length;
    const taskId = await callAsTask(proxy.url, 'trigger-long-running-operation', {
      duration: 2,
      steps: 20,
    });
    await waitFor(
      'the call to report progress',
      async () => ((await getTask(proxy.url, taskId))['statusMessage'] ? true : undefined),
      { timeoutMs: 20_000, intervalMs: 20 },
    );
    await proxy.child.kill('SIGKILL');
    proxy = await startProxy('trigger-long-running-operation');
    const done = await waitForTask(proxy.url, taskId, ['completed', 'failed']);
    assert.equal(done['status'], 'completed', JSON.stringify(done));
    assert.match(textOf(done), /Long running operation completed/);
    assert.deepEqual(relay.toolCalls.slice(before), [
      'trigger-long-running-operation',
      'trigger-long-running-operation',
    ]);
  });
});
