import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  createTaskSessionFromClient,
  resultFromTaskOutcome,
  type ApplicationInputRequest,
  type JsonRpcResponse,
  type RawClientDispatch,
  type TaskEnabledSession,
  type TaskExecutionEvent,
} from '@modelcontextprotocol/ext-tasks/client';
import { createHttpDispatch } from '../../src/client/rpc-http.js';
import { getTask, startDemo, type Running } from './support.js';

const INFO = { name: 'ext-tasks-e2e', version: '1.0.0' };

interface ToolResult {
  content?: { type: string; text?: string }[];
  isError?: boolean;
}

/** taskrail's dispatch; its replies are typed `Record<string, unknown>`, ext-tasks wants JsonValue. */
function rawDispatch(url: string): RawClientDispatch {
  const dispatch = createHttpDispatch({ url });
  return (request, options) => dispatch(request, options) as Promise<JsonRpcResponse>;
}

function firstText(result: unknown): string {
  return (result as ToolResult).content?.[0]?.text ?? '';
}

/**
 * The official ext-tasks requester session against taskrail, the way a host would wire it:
 * an SDK v2 Client pinned to 2026-07-28 plus a raw dispatch (the SDK's own decoder refuses
 * `resultType: "task"`), here taskrail's `createHttpDispatch`.
 */
describe('ext-tasks client session against taskrail', () => {
  let server: Running;
  let client: Client;
  let session: TaskEnabledSession;
  const asked: ApplicationInputRequest[] = [];

  before(async () => {
    server = await startDemo();
    client = new Client(INFO, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    session = createTaskSessionFromClient(client, {
      endpointId: server.url,
      rawDispatch: rawDispatch(server.url),
      v2RequestFraming: {
        protocolVersion: '2026-07-28',
        clientInfo: INFO,
        clientCapabilities: { elicitation: {} },
      },
      onInputRequest: (request) => {
        asked.push(request);
        const fields = JSON.stringify(request.params);
        const content = fields.includes('"confirm"') ? { confirm: true } : { name: 'Ada' };
        return Promise.resolve({ action: 'accept', content } as never);
      },
    });
  });

  after(async () => {
    await client.close();
    await server.close();
  });

  it('runs a tool as a task and settles with its result', async () => {
    const execution = await session.callTool(
      'slow_compute',
      { seconds: 0.2, label: 'ext' },
      { task: { preference: 'require' } },
    );
    assert.equal(execution.kind, 'task');
    const seen: string[] = [];
    const onEvent = (event: TaskExecutionEvent<unknown>): void => {
      if (event.type === 'task') seen.push(event.task.status);
    };
    const { outcome } = await execution.settle({ onEvent });
    assert.equal(outcome.status, 'completed');
    assert.match(firstText(resultFromTaskOutcome(outcome)), /Finished ext after 0\.2 second/);
    assert.ok(seen.includes('working'), `saw ${seen.join(',')}`);
  });

  it('answers input_required through onInputRequest and tasks/update', async () => {
    const before = asked.length;
    const execution = await session.callTool(
      'confirm_delete',
      { filename: 'ext.txt' },
      {
        task: { preference: 'require' },
      },
    );
    assert.equal(execution.kind, 'task');
    const { outcome } = await execution.settle();
    assert.equal(outcome.status, 'completed');
    assert.equal(firstText(resultFromTaskOutcome(outcome)), 'Deleted ext.txt.');
    assert.equal(asked.length, before + 1);
    assert.equal(asked[before]?.kind, 'elicitation');
  });

  it('retries an MRTR round before the task exists (test_tool_with_task)', async () => {
    const execution = await session.callTool(
      'test_tool_with_task',
      {},
      {
        task: { preference: 'require' },
      },
    );
    const { outcome } = await execution.settle();
    assert.equal(outcome.status, 'completed');
    assert.match(firstText(resultFromTaskOutcome(outcome)), /Hello, Ada!/);
  });

  it('keeps a tool error a completed task with isError', async () => {
    const execution = await session.callTool(
      'failing_job',
      {},
      {
        task: { preference: 'require' },
      },
    );
    const { outcome } = await execution.settle();
    assert.equal(outcome.status, 'completed');
    assert.equal((resultFromTaskOutcome(outcome) as ToolResult).isError, true);
  });

  it('cancels a running task with execution.cancel()', async () => {
    const execution = await session.callTool(
      'slow_compute',
      { seconds: 60 },
      {
        task: { preference: 'require' },
      },
    );
    assert.equal(execution.kind, 'task');
    const taskId = execution.kind === 'task' ? String(execution.handle.taskId) : '';
    await execution.cancel();
    const { outcome } = await execution.settle();
    assert.equal(outcome.status, 'cancelled');
    assert.throws(() => resultFromTaskOutcome(outcome));
    assert.equal((await getTask(server.url, taskId))['status'], 'cancelled');
  });
});
