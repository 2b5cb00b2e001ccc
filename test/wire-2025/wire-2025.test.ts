import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { waitFor } from '../helpers/wait.js';
import { startServer, client2025, type Running } from './fixture.js';

type Message = {
  type: string;
  task?: { status: string; taskId: string };
  result?: unknown;
  error?: unknown;
};

async function drain(stream: AsyncIterable<unknown>): Promise<Message[]> {
  const messages: Message[] = [];
  for await (const message of stream) messages.push(message as Message);
  return messages;
}

describe('2025-11-25 tasks with the SDK 1.x client', () => {
  let server: Running;
  let client: Client;
  before(async () => {
    server = await startServer();
    client = await client2025(server.url, {
      elicit: () => ({ action: 'accept', content: { ok: true } }),
    });
  });
  after(async () => {
    await client.close();
    await server.close();
  });

  it('declares capabilities.tasks and execution.taskSupport per tool', async () => {
    const caps = client.getServerCapabilities() as Record<string, unknown>;
    assert.deepEqual(caps['tasks'], { list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const { tools } = await client.listTools();
    const support = Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport]));
    assert.equal(support['greet'], 'forbidden');
    assert.equal(support['wait_gate'], 'optional');
    assert.equal(support['long_report'], 'required');
  });

  it('runs a task to completion through callToolStream', async () => {
    server.gates.open('done-1');
    const messages = await drain(
      client.experimental.tasks.callToolStream(
        { name: 'wait_gate', arguments: { gate: 'done-1' } },
        CallToolResultSchema,
        { task: { ttl: 60_000 } },
      ),
    );
    assert.equal(messages[0]?.type, 'taskCreated');
    const last = messages.at(-1) as {
      type: string;
      result: { content: { text: string }[]; _meta: Record<string, unknown> };
    };
    assert.equal(last.type, 'result');
    assert.equal(last.result.content[0]?.text, 'gate done-1 opened');
    const taskId = messages[0]?.task?.taskId;
    assert.deepEqual(last.result._meta['io.modelcontextprotocol/related-task'], { taskId });
  });

  it('maps isError to failed, and tasks/result returns the CallToolResult', async () => {
    const messages = await drain(
      client.experimental.tasks.callToolStream(
        { name: 'tool_error', arguments: {} },
        CallToolResultSchema,
        {
          task: {},
        },
      ),
    );
    const taskId = messages[0]?.task?.taskId as string;
    assert.equal(messages.at(-1)?.type, 'error');
    const task = await client.experimental.tasks.getTask(taskId);
    assert.equal(task.status, 'failed');
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    assert.equal(result.isError, true);
  });

  it('answers tasks/result of a failed task with the JSON-RPC error', async () => {
    const messages = await drain(
      client.experimental.tasks.callToolStream(
        { name: 'rpc_error', arguments: {} },
        CallToolResultSchema,
        {
          task: {},
        },
      ),
    );
    const taskId = messages[0]?.task?.taskId as string;
    await assert.rejects(
      client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema),
      (error: Error & { code?: number }) => {
        assert.equal(error.code, -32603);
        assert.match(error.message, /Upstream rejected the job/);
        return true;
      },
    );
  });

  it('sends an elicitation on the tasks/result stream and resumes with the answer', async () => {
    const messages = await drain(
      client.experimental.tasks.callToolStream(
        { name: 'confirm', arguments: {} },
        CallToolResultSchema,
        {
          task: {},
        },
      ),
    );
    const last = messages.at(-1) as { type: string; result: { content: { text: string }[] } };
    assert.equal(last.type, 'result');
    assert.equal(last.result.content[0]?.text, 'confirmed');
  });

  it('cancels a running task and refuses to cancel it twice', async () => {
    const created = await client.request(
      {
        method: 'tools/call',
        params: { name: 'wait_gate', arguments: { gate: 'never' }, task: { ttl: 60_000 } },
      },
      (await import('@modelcontextprotocol/sdk/types.js')).CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    const cancelled = await client.experimental.tasks.cancelTask(taskId);
    assert.equal(cancelled.status, 'cancelled');
    await assert.rejects(
      client.experimental.tasks.cancelTask(taskId),
      (error: Error & { code?: number }) => {
        assert.equal(error.code, -32602);
        assert.match(error.message, /already in terminal status 'cancelled'/);
        return true;
      },
    );
  });

  it('refuses a required tool without params.task (-32601) and carries the immediate response', async () => {
    await assert.rejects(
      client.request(
        { method: 'tools/call', params: { name: 'long_report', arguments: { gate: 'x' } } },
        CallToolResultSchema,
      ),
      (error: Error & { code?: number }) => {
        assert.equal(error.code, -32601);
        return true;
      },
    );
    const types = await import('@modelcontextprotocol/sdk/types.js');
    const created = await client.request(
      {
        method: 'tools/call',
        params: { name: 'long_report', arguments: { gate: 'report-1' }, task: {} },
      },
      types.CreateTaskResultSchema,
    );
    assert.equal(
      created._meta?.['io.modelcontextprotocol/model-immediate-response'],
      'The report is being built.',
    );
    assert.equal(created.task.status, 'working');
    assert.equal(typeof created.task.ttl, 'number');
    server.gates.open('report-1');
    await waitFor(
      'report to complete',
      async () =>
        (await client.experimental.tasks.getTask(created.task.taskId)).status === 'completed',
    );
  });
});
