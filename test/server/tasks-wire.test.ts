import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  CreateTaskResultV2Schema,
  GetTaskResultV2Schema,
} from '@modelcontextprotocol/ext-tasks/core/v2';
import { createTask, getTask, rpc, startDemo, waitForStatus, type Running } from './support.js';

describe('2026-07-28 tasks wire over HTTP', () => {
  let server: Running;
  before(async () => {
    server = await startDemo();
  });
  after(() => server.close());

  it('creates a flat CreateTaskResult only after the task is readable, then completes', async () => {
    const reply = await rpc(server.url, 'tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 0.2, label: 'x' },
    });
    CreateTaskResultV2Schema.parse(reply.body.result);
    const taskId = reply.body.result?.['taskId'] as string;
    const first = await getTask(server.url, taskId);
    assert.equal(first['taskId'], taskId);
    const done = await waitForStatus(server.url, taskId, ['completed']);
    GetTaskResultV2Schema.parse(done);
    const result = done['result'] as { resultType: string; content: { text: string }[] };
    assert.equal(result.resultType, 'complete');
    assert.match(result.content[0]?.text ?? '', /Finished x/);
    assert.match(done['createdAt'] as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('a tool error (isError) ends completed; a protocol error ends failed without result', async () => {
    const failing = await waitForStatus(
      server.url,
      await createTask(server.url, 'failing_job', {}),
      ['completed', 'failed'],
    );
    assert.equal(failing['status'], 'completed');
    assert.equal((failing['result'] as { isError: boolean }).isError, true);
    const broken = await waitForStatus(
      server.url,
      await createTask(server.url, 'protocol_error_job', {}),
      ['completed', 'failed'],
    );
    assert.equal(broken['status'], 'failed');
    assert.equal((broken['error'] as { code: number }).code, -32603);
    assert.equal('result' in broken, false);
    GetTaskResultV2Schema.parse(broken);
  });

  it('input_required: a partial tasks/update leaves the rest pending, the full one completes', async () => {
    const taskId = await createTask(server.url, 'multi_input', {});
    const parked = await waitForStatus(server.url, taskId, ['input_required']);
    assert.deepEqual(Object.keys(parked['inputRequests'] as object).sort(), ['confirm', 'name']);
    const ack = await rpc(server.url, 'tasks/update', {
      taskId,
      inputResponses: { name: { action: 'accept', content: { name: 'Ada' } }, bogus: { x: 1 } },
    });
    assert.deepEqual(ack.body.result, {
      resultType: 'complete',
      _meta: ack.body.result?.['_meta'],
    });
    const half = await getTask(server.url, taskId);
    assert.equal(half['status'], 'input_required');
    assert.deepEqual(Object.keys(half['inputRequests'] as object), ['confirm']);
    await rpc(server.url, 'tasks/update', {
      taskId,
      inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
    });
    const done = await waitForStatus(server.url, taskId, ['completed']);
    assert.match(JSON.stringify(done['result']), /Ada/);
  });

  it('cancels a running task and a parked task; cancelling a terminal task is an ack too', async () => {
    const running = await createTask(server.url, 'slow_compute', { seconds: 60 });
    const parked = await createTask(server.url, 'confirm_delete', { filename: 'a.txt' });
    await waitForStatus(server.url, parked, ['input_required']);
    for (const taskId of [running, parked]) {
      const ack = await rpc(server.url, 'tasks/cancel', { taskId });
      assert.equal(ack.body.result?.['resultType'], 'complete');
      assert.equal(
        (await waitForStatus(server.url, taskId, ['cancelled', 'completed', 'failed']))['status'],
        'cancelled',
      );
    }
    const again = await rpc(server.url, 'tasks/cancel', { taskId: running });
    assert.equal(again.body.result?.['resultType'], 'complete');
  });

  it('unknown ids answer -32602; removed methods -32601 (404)', async () => {
    for (const method of ['tasks/get', 'tasks/cancel']) {
      const reply = await rpc(server.url, method, { taskId: 'no-such-task-0000' });
      assert.equal(reply.body.error?.code, -32602);
    }
    const update = await rpc(server.url, 'tasks/update', {
      taskId: 'no-such-task-0000',
      inputResponses: {},
    });
    assert.equal(update.body.error?.code, -32602);
    for (const method of ['tasks/result', 'tasks/list']) {
      const reply = await rpc(server.url, method, { taskId: 'x' });
      assert.equal(reply.status, 404);
      assert.equal(reply.body.error?.code, -32601);
    }
  });

  it('-32021 (400) before the lookup for non-declaring tasks/*, and for required tools', async () => {
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      const reply = await rpc(
        server.url,
        method,
        { taskId: 'gate-test', inputResponses: {} },
        { caps: {} },
      );
      assert.equal(reply.status, 400);
      assert.equal(reply.body.error?.code, -32021);
    }
    const required = await rpc(
      server.url,
      'tools/call',
      { name: 'failing_job', arguments: {} },
      { caps: {} },
    );
    assert.equal(required.status, 400);
    assert.deepEqual(
      (required.body.error?.data as { requiredCapabilities: unknown }).requiredCapabilities,
      {
        extensions: { 'io.modelcontextprotocol/tasks': {} },
      },
    );
    const optional = await rpc(
      server.url,
      'tools/call',
      { name: 'slow_compute', arguments: { seconds: 0 } },
      { caps: {} },
    );
    assert.equal(optional.body.result?.['resultType'], 'complete');
  });

  it('-32020 (400) for a Mcp-Name or Mcp-Method that disagrees with the body', async () => {
    const taskId = await createTask(server.url, 'slow_compute', { seconds: 0 });
    const name = await rpc(
      server.url,
      'tasks/get',
      { taskId },
      { headers: { 'mcp-name': 'other' } },
    );
    assert.equal(name.status, 400);
    assert.equal(name.body.error?.code, -32020);
    const method = await rpc(
      server.url,
      'tasks/get',
      { taskId },
      { headers: { 'mcp-method': 'tasks/cancel' } },
    );
    assert.equal(method.body.error?.code, -32020);
    const base64 = await rpc(
      server.url,
      'tasks/get',
      { taskId },
      { headers: { 'mcp-name': `=?base64?${Buffer.from(taskId).toString('base64')}?=` } },
    );
    assert.equal(base64.body.result?.['taskId'], taskId);
  });

  it('a 2025-11-25 params.task hint is neither an error nor an opt-in', async () => {
    const reply = await rpc(server.url, 'tools/call', {
      name: 'greet',
      arguments: { name: 'legacy' },
      task: { ttl: 1000 },
    });
    assert.equal((reply.body.result?.['content'] as { text: string }[])[0]?.text, 'Hello, legacy!');
  });

  it('MRTR before the task: input_required first, then a task that uses the answer', async () => {
    // Elicitation in an InputRequiredResult needs the client's elicitation capability.
    const caps = { elicitation: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } };
    const first = await rpc(
      server.url,
      'tools/call',
      { name: 'test_tool_with_task', arguments: {} },
      { caps },
    );
    assert.equal(first.body.result?.['resultType'], 'input_required');
    const key = Object.keys(first.body.result?.['inputRequests'] as object)[0] as string;
    const second = await rpc(
      server.url,
      'tools/call',
      {
        name: 'test_tool_with_task',
        arguments: {},
        inputResponses: { [key]: { action: 'accept', content: { name: 'Alice' } } },
      },
      { caps },
    );
    assert.equal(second.body.result?.['resultType'], 'task');
    const done = await waitForStatus(server.url, second.body.result?.['taskId'] as string, [
      'completed',
    ]);
    assert.match(JSON.stringify(done['result']), /Alice/);
  });
});

describe('auth and limits', () => {
  let server: Running;
  before(async () => {
    server = await startDemo({ auth: true, maxBodyBytes: 64 * 1024 });
  });
  after(() => server.close());

  it('401 without a known bearer token', async () => {
    assert.equal(
      (await rpc(server.url, 'tools/call', { name: 'greet', arguments: { name: 'x' } })).status,
      401,
    );
    assert.equal(
      (
        await rpc(
          server.url,
          'tools/call',
          { name: 'greet', arguments: { name: 'x' } },
          { bearer: 'nope' },
        )
      ).status,
      401,
    );
  });

  it("another principal's task answers exactly like an unknown one", async () => {
    const taskId = await createTask(
      server.url,
      'slow_compute',
      { seconds: 30 },
      { bearer: 'tok-a' },
    );
    const mine = await rpc(server.url, 'tasks/get', { taskId }, { bearer: 'tok-a' });
    assert.equal(mine.body.result?.['taskId'], taskId);
    const foreign = await rpc(server.url, 'tasks/get', { taskId }, { bearer: 'tok-b', id: 7 });
    const unknown = await rpc(
      server.url,
      'tasks/get',
      { taskId: 'AAAAAAAAAAAAAAAAAAAAAAAA' },
      { bearer: 'tok-b', id: 7 },
    );
    assert.deepEqual(foreign, unknown);
    assert.equal(
      (await rpc(server.url, 'tasks/cancel', { taskId }, { bearer: 'tok-b' })).body.error?.code,
      -32602,
    );
    assert.equal((await getTask(server.url, taskId, { bearer: 'tok-a' }))['status'], 'working');
    await rpc(server.url, 'tasks/cancel', { taskId }, { bearer: 'tok-a' });
  });

  it('413 for a body over the limit', async () => {
    const reply = await rpc(
      server.url,
      'tools/call',
      { name: 'greet', arguments: { name: 'x'.repeat(70 * 1024) } },
      { bearer: 'tok-a' },
    );
    assert.equal(reply.status, 413);
  });
});
