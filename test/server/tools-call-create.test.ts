import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as z from 'zod/v4';
import { createTaskServer, type TaskServer } from '../../src/server/index.js';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';
import { post, rpc } from './support.js';

/**
 * Plain task-creating tools/call are answered in front of the SDK; these pin that the answers
 * are the ones the SDK path gives (a `beforeTask` hook that does nothing forces the SDK path).
 */
describe('tools/call creating a task, answered before the SDK', () => {
  const store = new MemoryTaskStore();
  let app: TaskServer;
  let url: string;
  const schema = z.object({ n: z.number(), label: z.string().default('none') });
  const echo = async (args: Record<string, unknown>) => ({
    content: [{ type: 'text' as const, text: JSON.stringify(args) }],
  });
  before(async () => {
    app = createTaskServer({ store, runtime: { maxArgumentsBytes: 200 } })
      .tool('fast', { description: 'x', inputSchema: schema, task: true }, echo)
      .tool(
        'via_sdk',
        { description: 'x', inputSchema: schema, task: true, beforeTask: () => undefined },
        echo,
      );
    ({ url } = await app.listen(0));
  });
  after(async () => {
    await app.close(1000);
    await store.close();
  });

  const call = (name: string, args: unknown) => rpc(url, 'tools/call', { name, arguments: args });
  const taskCount = async () => (await store.list({ limit: 1000 })).tasks.length;

  it('gives the same CreateTaskResult as the SDK path, with schema defaults applied', async () => {
    const fast = await call('fast', { n: 1 });
    const sdk = await call('via_sdk', { n: 1 });
    assert.equal(fast.status, 200);
    assert.deepEqual(Object.keys(fast.body).sort(), Object.keys(sdk.body).sort());
    const shape = (result: Record<string, unknown> | undefined) =>
      Object.fromEntries(
        Object.entries(result ?? {}).map(([key, value]) => [
          key,
          ['taskId', 'createdAt', 'lastUpdatedAt'].includes(key) ? typeof value : value,
        ]),
      );
    assert.deepEqual(shape(fast.body.result), shape(sdk.body.result));
    assert.equal(fast.body.result?.['resultType'], 'task');
    for (const reply of [fast, sdk]) {
      const stored = await store.get(reply.body.result?.['taskId'] as string);
      assert.deepEqual(stored?.arguments, { n: 1, label: 'none' });
      // An anonymous caller's connection, as a digest: whom its fair shares count against.
      const { callerConnection, ...meta } = stored?.meta ?? {};
      assert.match(String(callerConnection), /^c:[\w-]{16}$/);
      assert.deepEqual(meta, {
        clientCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } },
        'taskrail/run': { maxAttempts: 3 },
      });
    }
  });

  it('leaves arguments the schema refuses to the SDK, and creates no task', async () => {
    const before = await taskCount();
    const answer = (reply: Awaited<ReturnType<typeof call>>) =>
      JSON.stringify({ result: reply.body.result, error: reply.body.error }).replaceAll(
        'via_sdk',
        'fast',
      );
    for (const args of [{ n: 'one' }, 'not an object', [1]]) {
      const fast = await call('fast', args);
      assert.ok(fast.body.result?.['isError'] === true || fast.body.error !== undefined);
      assert.equal(answer(fast), answer(await call('via_sdk', args)));
    }
    assert.equal(await taskCount(), before);
  });

  it('answers a runtime refusal (arguments over the size limit) as the SDK does', async () => {
    const before = await taskCount();
    const args = { n: 1, label: 'x'.repeat(300) };
    const fast = await call('fast', args);
    const sdk = await call('via_sdk', args);
    assert.equal(fast.body.result?.['isError'], true);
    assert.deepEqual(fast.body.result?.['content'], sdk.body.result?.['content']);
    assert.equal(await taskCount(), before);
  });

  it('honours an idempotency key on both paths: a retry gets the first task', async () => {
    const before = await taskCount();
    for (const name of ['fast', 'via_sdk']) {
      const meta = { 'dev.taskrail/idempotency-key': `retry-${name}` };
      const send = (args: unknown) => rpc(url, 'tools/call', { name, arguments: args }, { meta });
      const first = await send({ n: 1 });
      const retry = await send({ n: 1 });
      assert.equal(typeof first.body.result?.['taskId'], 'string');
      assert.equal(retry.body.result?.['taskId'], first.body.result?.['taskId'], name);
      const other = await send({ n: 2 });
      assert.equal(other.body.result?.['isError'], true);
      assert.match(JSON.stringify(other.body.result), /already used for a different call/);
    }
    const bad = await rpc(
      url,
      'tools/call',
      { name: 'fast', arguments: { n: 1 } },
      { meta: { 'dev.taskrail/idempotency-key': 'no spaces allowed' } },
    );
    assert.equal(bad.body.result?.['isError'], true);
    assert.equal(await taskCount(), before + 2);
  });

  it('leaves a body that is not declared JSON to the SDK (HTTP 415)', async () => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'fast',
        arguments: { n: 1 },
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': {
            extensions: { 'io.modelcontextprotocol/tasks': {} },
          },
        },
      },
    });
    const reply = await post(url, body, {
      'content-type': 'text/plain',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'fast',
    });
    assert.equal(reply.status, 415);
  });
});
