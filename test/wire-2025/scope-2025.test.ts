import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  TaskStatusNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { waitFor } from '../helpers/wait.js';
import { startServer, client2025, type Running } from './fixture.js';
import { wire2026Rpc } from './wire-2026-rpc.js';

async function createTask2025(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<string> {
  const created = await client.request(
    { method: 'tools/call', params: { name, arguments: args, task: { ttl: 60_000 } } },
    CreateTaskResultSchema,
  );
  return created.task.taskId;
}

async function listedIds(client: Client): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.experimental.tasks.listTasks(cursor);
    ids.push(...page.tasks.map((task) => task.taskId));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return ids;
}

const notFound = (error: Error & { code?: number }) => {
  assert.equal(error.code, -32602);
  return true;
};

describe('2025-11-25 tasks: who sees what', () => {
  let server: Running;
  before(async () => {
    server = await startServer();
    server.gates.open('open');
  });
  after(() => server.close());

  it("lists only the anonymous session's own tasks, and rejects a bad cursor", async () => {
    const a = await client2025(server.url);
    const b = await client2025(server.url);
    try {
      const mine = await createTask2025(a, 'wait_gate', { gate: 'open' });
      const theirs = await createTask2025(b, 'wait_gate', { gate: 'open' });
      assert.deepEqual(await listedIds(a), [mine]);
      assert.deepEqual(await listedIds(b), [theirs]);
      await assert.rejects(a.experimental.tasks.listTasks('not-a-cursor'), notFound);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('pushes notifications/tasks/status on the session stream', async () => {
    const client = await client2025(server.url);
    const seen: { taskId: string; status: string; statusMessage?: string }[] = [];
    client.setNotificationHandler(TaskStatusNotificationSchema, (n) => void seen.push(n.params));
    try {
      const taskId = await createTask2025(client, 'ticker', { gate: 'tick-1' });
      await waitFor('a status notification', () => seen.some((n) => n.taskId === taskId));
      server.gates.open('tick-1');
      await waitFor('the completed notification', () =>
        seen.some((n) => n.taskId === taskId && n.status === 'completed'),
      );
    } finally {
      await client.close();
    }
  });
});

describe('2025-11-25 tasks with principals', () => {
  let server: Running;
  before(async () => {
    server = await startServer({ auth: { tokens: { 'tok-a': 'alice', 'tok-b': 'bob' } } });
    server.gates.open('open');
  });
  after(() => server.close());

  it("keeps another principal's tasks out of list, get, result and cancel", async () => {
    const alice = await client2025(server.url, { bearer: 'tok-a' });
    const bob = await client2025(server.url, { bearer: 'tok-b' });
    try {
      const taskId = await createTask2025(alice, 'wait_gate', { gate: 'open' });
      assert.ok((await listedIds(alice)).includes(taskId));
      assert.ok(!(await listedIds(bob)).includes(taskId));
      await assert.rejects(bob.experimental.tasks.getTask(taskId), notFound);
      await assert.rejects(
        bob.experimental.tasks.getTaskResult(taskId, CallToolResultSchema),
        notFound,
      );
      await assert.rejects(bob.experimental.tasks.cancelTask(taskId), notFound);
    } finally {
      await alice.close();
      await bob.close();
    }
  });

  it('lets a second session of the same principal read the task (a lost session loses nothing)', async () => {
    const first = await client2025(server.url, { bearer: 'tok-a' });
    const taskId = await createTask2025(first, 'wait_gate', { gate: 'open' });
    await first.close();
    const second = await client2025(server.url, { bearer: 'tok-a' });
    try {
      const result = await second.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      assert.equal((result.content[0] as { text: string }).text, 'gate open opened');
      assert.ok((await listedIds(second)).includes(taskId));
    } finally {
      await second.close();
    }
  });
});

describe('one task, two wires', () => {
  let server: Running;
  before(async () => {
    server = await startServer();
    server.gates.open('open');
  });
  after(() => server.close());

  it('reads a task created on the 2025-11-25 wire through 2026-07-28 tasks/get', async () => {
    const client = await client2025(server.url);
    const rpc = wire2026Rpc(server.url);
    try {
      const ok = await createTask2025(client, 'wait_gate', { gate: 'open' });
      const failed2025 = await createTask2025(client, 'tool_error', {});
      const done = await waitFor('the 2025-11-25 task to complete', async () => {
        const task = await rpc('tasks/get', { taskId: ok });
        return task['status'] === 'completed' ? task : undefined;
      });
      assert.equal(
        (done['result'] as { content: { text: string }[] }).content[0]?.text,
        'gate open opened',
      );
      // isError: `failed` on the 2025-11-25 wire, `completed` with the result on the 2026-07-28 wire.
      await waitFor(
        'the tool error',
        async () => (await client.experimental.tasks.getTask(failed2025)).status === 'failed',
      );
      const on2026 = await rpc('tasks/get', { taskId: failed2025 });
      assert.equal(on2026['status'], 'completed');
      assert.equal((on2026['result'] as { isError?: boolean }).isError, true);
    } finally {
      await client.close();
    }
  });

  it('reads and collects a task created on the 2026-07-28 wire through the 2025-11-25 wire', async () => {
    const rpc = wire2026Rpc(server.url);
    const created = await rpc('tools/call', { name: 'wait_gate', arguments: { gate: 'open' } });
    assert.equal(created['resultType'], 'task');
    const taskId = created['taskId'] as string;
    const client = await client2025(server.url);
    try {
      const task = await client.experimental.tasks.getTask(taskId);
      assert.equal(task.taskId, taskId);
      const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      assert.equal((result.content[0] as { text: string }).text, 'gate open opened');
    } finally {
      await client.close();
    }
  });
});
