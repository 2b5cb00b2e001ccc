import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createHttpDispatch } from '../../src/client/rpc-http.js';
import { waitFor } from '../helpers/wait.js';
import { startServer, client2025, type Running } from './fixture.js';

type ToolResult = {
  content: { type: string; text: string }[];
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
};

async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args })) as ToolResult;
}

describe('fallback tools for hosts without tasks', () => {
  let server: Running;
  let alice: Client;
  let bob: Client;
  before(async () => {
    server = await startServer({
      fallbackTools: true,
      inlineWaitMs: 300,
      auth: { tokens: { 'tok-a': 'alice', 'tok-b': 'bob' } },
    });
    alice = await client2025(server.url, { bearer: 'tok-a', tasks: false });
    bob = await client2025(server.url, { bearer: 'tok-b', tasks: false });
  });
  after(async () => {
    await alice.close();
    await bob.close();
    await server.close();
  });

  it('lists plain tools plus task_status, task_result and task_cancel', async () => {
    const { tools } = await alice.listTools();
    const names = tools.map((tool) => tool.name);
    for (const name of ['task_status', 'task_result', 'task_cancel'])
      assert.ok(names.includes(name), name);
    assert.equal(tools.find((tool) => tool.name === 'long_report')?.execution, undefined);
  });

  it('answers a required tool at once with the task id, then follows it to the result', async () => {
    const started = await call(alice, 'long_report', { gate: 'fb-1' });
    const taskId = started.structuredContent?.['taskId'] as string;
    assert.match(started.content[0]?.text ?? '', new RegExp(`${taskId}.*task_status`, 's'));
    const status = await call(alice, 'task_status', { taskId });
    assert.match(status.content[0]?.text ?? '', /still working/);
    const early = await call(alice, 'task_result', { taskId });
    assert.notEqual(early.isError, true);
    assert.equal(early.structuredContent?.['status'], 'working');
    server.gates.open('fb-1');
    const done = await waitFor('the report', async () => {
      const result = await call(alice, 'task_result', { taskId });
      return result.structuredContent?.['status'] === undefined ? result : undefined;
    });
    assert.equal(done.content[0]?.text, 'report done');
  });

  it('cancels through task_cancel, and keeps tasks to their principal', async () => {
    const started = await call(alice, 'long_report', { gate: 'never' });
    const taskId = started.structuredContent?.['taskId'] as string;
    const foreign = await call(bob, 'task_cancel', { taskId });
    assert.equal(foreign.isError, true);
    assert.match(foreign.content[0]?.text ?? '', /no task/);
    const cancelled = await call(alice, 'task_cancel', { taskId });
    assert.match(cancelled.content[0]?.text ?? '', /cancelled/);
    const result = await call(alice, 'task_result', { taskId });
    assert.equal(result.isError, true);
  });

  it('serves a 2026-07-28 host that does not declare the extension the same way (no -32021)', async () => {
    const dispatch = createHttpDispatch({
      url: server.url,
      bearer: 'tok-a',
      framing: {
        protocolVersion: '2026-07-28',
        clientInfo: { name: 'plain', version: '1' },
        clientCapabilities: {},
      },
    });
    const reply = await dispatch({
      method: 'tools/call',
      params: { name: 'long_report', arguments: { gate: 'fb-2' } },
    });
    assert.equal(reply.kind, 'result');
    const result = (reply as unknown as { result: ToolResult }).result;
    const taskId = result.structuredContent?.['taskId'];
    assert.equal(typeof taskId, 'string');
    server.gates.open('fb-2');
    await waitFor('the task to finish', async () => {
      const status = await call(alice, 'task_status', { taskId });
      return status.structuredContent?.['status'] === 'completed';
    });
  });
});
