import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { getTask, rpc } from '../server/support.js';
import { waitFor } from '../helpers/wait.js';
import {
  callAsTask,
  EVERYTHING,
  FILESYSTEM,
  startInProcess,
  textOf,
  waitForTask,
  type RunningProxyServer,
} from './support.js';

interface ListedTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

async function listTools(url: string): Promise<ListedTool[]> {
  const reply = await rpc(url, 'tools/list', {});
  return (reply.body.result?.['tools'] ?? []) as ListedTool[];
}

/** server-everything (npm, SDK v1, 2025-11-25) on stdio behind an in-process proxy. */
describe('proxy in front of server-everything over stdio', () => {
  let proxy: RunningProxyServer;

  before(async () => {
    proxy = await startInProcess({
      upstream: { kind: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'] },
      syncTools: ['echo'],
      concurrency: 2,
    });
  });
  after(() => proxy.close());

  it("lists the upstream's tools under their names, schemas and task modes", async () => {
    const tools = await listTools(proxy.url);
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    const sum = byName.get('get-sum');
    assert.ok(sum, `tools: ${[...byName.keys()].join(', ')}`);
    assert.equal(sum.description, 'Returns the sum of two numbers');
    assert.deepEqual(Object.keys(sum.inputSchema['properties'] as object).sort(), ['a', 'b']);
  });

  it('shows each task mode to a 2025-11-25 client (execution.taskSupport)', async () => {
    const client = new Client({ name: 'sdk-v1', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(proxy.url)));
    try {
      const { tools } = await client.listTools();
      const mode = (name: string) => tools.find((t) => t.name === name)?.execution?.taskSupport;
      assert.equal(mode('simulate-research-query'), 'required');
      assert.equal(mode('get-sum'), 'optional');
      assert.equal(mode('echo'), 'forbidden');
    } finally {
      await client.close();
    }
  });

  it('writes the upstream child stderr into the proxy log', () => {
    assert.ok(
      proxy.logger.lines.some((line) => line['message'] === 'upstream stderr'),
      JSON.stringify(proxy.logger.lines.slice(0, 5)),
    );
  });

  it('runs a sum as a task, and a sync tool without one', async () => {
    const taskId = await callAsTask(proxy.url, 'get-sum', { a: 2, b: 40 });
    const done = await waitForTask(proxy.url, taskId, ['completed', 'failed']);
    assert.equal(done['status'], 'completed');
    assert.equal(textOf(done), 'The sum of 2 and 40 is 42.');
    const echo = await rpc(proxy.url, 'tools/call', { name: 'echo', arguments: { message: 'hi' } });
    assert.match(JSON.stringify(echo.body.result), /Echo: hi/);
  });

  it("asks a host without tasks the upstream's question over its own request", async () => {
    await waitFor('the elicitation tool to be listed', async () =>
      (await listTools(proxy.url)).some((t) => t.name === 'trigger-elicitation-request')
        ? true
        : undefined,
    );
    const client = new Client(
      { name: 'no-tasks-host', version: '1.0.0' },
      { capabilities: { elicitation: { form: {} } } },
    );
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { name: 'Alan Turing', check: true } };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(proxy.url)));
    try {
      const result = await client.callTool({ name: 'trigger-elicitation-request', arguments: {} });
      assert.match(JSON.stringify(result.content), /Name: Alan Turing/);
      assert.equal(asked.length, 1);
    } finally {
      await client.close();
    }
  });

  it("turns the long-running operation's progress into statusMessage", async () => {
    const taskId = await callAsTask(proxy.url, 'trigger-long-running-operation', {
      duration: 3,
      steps: 3,
    });
    const seen = await waitFor(
      'a progress statusMessage',
      async () => {
        const task = await getTask(proxy.url, taskId);
        const message = task['statusMessage'];
        return typeof message === 'string' && /\d\/3/.test(message) ? message : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 50 },
    );
    assert.match(seen, /[123]\/3/);
    const done = await waitForTask(proxy.url, taskId, ['completed', 'failed']);
    assert.match(textOf(done), /Long running operation completed\. Duration: 3 seconds, Steps: 3/);
  });

  it('follows the task-requiring research tool through its upstream task', async () => {
    const taskId = await callAsTask(proxy.url, 'simulate-research-query', { topic: 'rivers' });
    const done = await waitForTask(proxy.url, taskId, ['completed', 'failed'], 30_000);
    assert.equal(done['status'], 'completed', JSON.stringify(done));
    assert.match(textOf(done), /# Research Report: rivers/);
  });

  it('parks on the upstream elicitation and sends the tasks/update answer back', async () => {
    await waitFor('the elicitation tool to be listed', async () =>
      (await listTools(proxy.url)).some((t) => t.name === 'trigger-elicitation-request')
        ? true
        : undefined,
    );
    const taskId = await callAsTask(proxy.url, 'trigger-elicitation-request', {});
    const parked = await waitForTask(proxy.url, taskId, ['input_required']);
    const requests = parked['inputRequests'] as Record<string, { method: string; params: object }>;
    const [key, request] = Object.entries(requests)[0] ?? [];
    assert.ok(key !== undefined && request !== undefined);
    assert.equal(request.method, 'elicitation/create');
    assert.match(JSON.stringify(request.params), /Your full, legal name/);
    const answer = { action: 'accept', content: { name: 'Ada Lovelace', check: true } };
    const update = await rpc(proxy.url, 'tasks/update', {
      taskId,
      inputResponses: { [key]: answer },
    });
    assert.equal(update.body.error, undefined, JSON.stringify(update.body));
    const done = await waitForTask(proxy.url, taskId, ['completed', 'failed']);
    assert.match(textOf(done), /Name: Ada Lovelace/);
    assert.match(textOf(done), /Agreed to terms: true/);
  });

  it('parks on the upstream sampling request and returns the answer upstream', async () => {
    await waitFor('the sampling tool to be listed', async () =>
      (await listTools(proxy.url)).some((t) => t.name === 'trigger-sampling-request')
        ? true
        : undefined,
    );
    const taskId = await callAsTask(proxy.url, 'trigger-sampling-request', { prompt: 'Hi?' });
    const parked = await waitForTask(proxy.url, taskId, ['input_required', 'failed']);
    const [key, request] = Object.entries(parked['inputRequests'] as object)[0] ?? [];
    assert.ok(key !== undefined);
    assert.equal((request as { method: string }).method, 'sampling/createMessage');
    assert.match(JSON.stringify(request), /Hi\?/);
    const answer = {
      role: 'assistant',
      content: { type: 'text', text: 'Hello from the caller' },
      model: 'test-model',
      stopReason: 'endTurn',
    };
    await rpc(proxy.url, 'tasks/update', { taskId, inputResponses: { [key]: answer } });
    const done = await waitForTask(proxy.url, taskId, ['completed', 'failed']);
    assert.match(textOf(done), /Hello from the caller/);
  });

  it('cancels the upstream call on tasks/cancel and frees its slot', async () => {
    // concurrency 2: two 60 s calls hold both slots until cancelled.
    const first = await callAsTask(proxy.url, 'trigger-long-running-operation', {
      duration: 60,
      steps: 60,
    });
    const second = await callAsTask(proxy.url, 'trigger-long-running-operation', {
      duration: 60,
      steps: 60,
    });
    await waitForTask(proxy.url, first, ['working']);
    await waitFor(
      'both calls to report progress',
      async () => {
        const tasks = await Promise.all([getTask(proxy.url, first), getTask(proxy.url, second)]);
        return tasks.every((t) => typeof t['statusMessage'] === 'string') ? true : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 50 },
    );
    for (const taskId of [first, second]) {
      const reply = await rpc(proxy.url, 'tasks/cancel', { taskId });
      assert.equal(reply.body.error, undefined);
    }
    assert.equal((await waitForTask(proxy.url, first, ['cancelled']))['status'], 'cancelled');
    // A new call only gets a slot once a cancelled call has let go of the upstream.
    const sum = await callAsTask(proxy.url, 'get-sum', { a: 1, b: 1 });
    const done = await waitForTask(proxy.url, sum, ['completed', 'failed'], 20_000);
    assert.equal(textOf(done), 'The sum of 1 and 1 is 2.');
  });
});

describe('proxy in front of server-filesystem over stdio', () => {
  let proxy: RunningProxyServer;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'taskrail-proxy-fs-'));
    writeFileSync(join(dir, 'note.txt'), 'durable hello\n');
    proxy = await startInProcess({
      upstream: { kind: 'stdio', command: process.execPath, args: [FILESYSTEM, dir] },
    });
  });
  after(async () => {
    await proxy.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads a file through a task', async () => {
    const taskId = await callAsTask(proxy.url, 'read_text_file', { path: join(dir, 'note.txt') });
    const done = await waitForTask(proxy.url, taskId, ['completed', 'failed']);
    assert.equal(done['status'], 'completed', JSON.stringify(done));
    assert.match(textOf(done), /durable hello/);
  });
});
