import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { waitFor } from '../helpers/wait.js';
import { StdioChild } from './stdio-child.js';
import { PATIENT, StdioHost } from './stdio-host.js';

function textOf(result: { content: unknown[] }): string {
  return (result.content[0] as { text: string }).text;
}

describe('serve --stdio with a 2025-11-25 host (SDK 1.x client)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-stdio-2025-'));
  const store = `sqlite:${join(dir, 'tasks.db')}`;
  let host: StdioHost;

  before(async () => {
    host = await new StdioHost().start(store);
  });

  after(async () => {
    await host.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('declares capabilities.tasks and execution.taskSupport per tool', async () => {
    const caps = host.client.getServerCapabilities() as Record<string, unknown>;
    assert.deepEqual(caps['tasks'], { list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const { tools } = await host.client.listTools();
    const support = Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport]));
    assert.equal(support['greet'], 'forbidden');
    assert.equal(support['slow_compute'], 'optional');
    assert.equal(support['confirm_delete'], 'required');
  });

  it('creates a task with params.task, serves tasks/get, tasks/result and tasks/list', async () => {
    const taskId = await host.createTask('slow_compute', { seconds: 0.2, label: 'a' });
    await host.until(taskId, 'completed');
    const result = await host.client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    assert.match(textOf(result), /Finished a after 0.2 second/);
    assert.ok((await host.listedIds()).includes(taskId));
  });

  it('pushes notifications/tasks/status to the host', async () => {
    const taskId = await host.createTask('slow_compute', { seconds: 0.2 });
    await waitFor(
      'a completed status notification',
      () => host.statuses.some((s) => s.taskId === taskId && s.status === 'completed'),
      PATIENT,
    );
  });

  it('cancels a running task', async () => {
    const taskId = await host.createTask('slow_compute', { seconds: 600 });
    await host.until(taskId, 'working');
    const cancelled = await host.client.experimental.tasks.cancelTask(taskId);
    assert.equal(cancelled.status, 'cancelled');
    assert.equal((await host.client.experimental.tasks.getTask(taskId)).status, 'cancelled');
  });

  it('asks the host (elicitation) for an input_required task and resumes with the answer', async () => {
    const taskId = await host.createTask('confirm_delete', { filename: 'notes.txt' });
    await host.until(taskId, 'input_required');
    const result = await host.client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    assert.equal(textOf(result), 'Deleted notes.txt.');
    assert.deepEqual(host.questions, ['Delete notes.txt?']);
  });
});

describe('serve --stdio: a restarted 2025-11-25 host finds its tasks', () => {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-stdio-2025-restart-'));
  const store = `sqlite:${join(dir, 'tasks.db')}`;

  after(() => rmSync(dir, { recursive: true, force: true }));

  it('reads, lists and gets the results of the tasks an earlier process created', async () => {
    const first = await new StdioHost().start(store);
    const done = await first.createTask('slow_compute', { seconds: 0, label: 'before' });
    await first.until(done, 'completed');
    const running = await first.createTask('slow_compute', { seconds: 1, label: 'across' });
    await first.close();

    const next = await new StdioHost().start(store);
    try {
      assert.equal((await next.client.experimental.tasks.getTask(done)).status, 'completed');
      const listed = await next.listedIds();
      assert.ok(listed.includes(done) && listed.includes(running), JSON.stringify(listed));
      const before = await next.client.experimental.tasks.getTaskResult(done, CallToolResultSchema);
      assert.match(textOf(before), /Finished before/);
      // Still running when the first host closed: that process finished it while stopping.
      const across = await next.client.experimental.tasks.getTaskResult(
        running,
        CallToolResultSchema,
      );
      assert.match(textOf(across), /Finished across/);
    } finally {
      await next.close();
    }
  });
});

describe('serve --stdio: an initialize with an older protocol version', () => {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-stdio-2025-older-'));
  let stdio: StdioChild;

  before(() => {
    stdio = new StdioChild(`sqlite:${join(dir, 'tasks.db')}`);
  });

  after(async () => {
    await stdio.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is served by the same session server, without the capabilities its version lacks', async () => {
    stdio.write({
      jsonrpc: '2.0',
      id: 9001,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: { tasks: {} },
        clientInfo: { name: 'older-host', version: '1.0.0' },
      },
    });
    const init = await stdio.next('the initialize answer', (m) => m.id === 9001);
    assert.equal(init.result?.['protocolVersion'], '2025-06-18');
    const caps = init.result?.['capabilities'] as Record<string, unknown>;
    // tasks (2025-11-25) and extensions (2026-07-28) are not in 2025-06-18 (Codex, Gemini CLI).
    assert.equal(caps['tasks'], undefined, JSON.stringify(caps));
    assert.equal(caps['extensions'], undefined, JSON.stringify(caps));
    assert.ok(caps['tools'] && caps['resources'], JSON.stringify(caps));
    stdio.write({ jsonrpc: '2.0', method: 'notifications/initialized' });
    stdio.write({
      jsonrpc: '2.0',
      id: 9002,
      method: 'tools/call',
      params: { name: 'slow_compute', arguments: { seconds: 0 }, task: {} },
    });
    // A task asked for anyway is still served (nothing is lost for a lenient client).
    const call = await stdio.next('the tools/call answer', (m) => m.id === 9002);
    const task = call.result?.['task'] as { taskId?: string } | undefined;
    assert.equal(typeof task?.taskId, 'string', JSON.stringify(call));
  });
});
