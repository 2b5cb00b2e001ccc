import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { createTaskServer, type TaskServer } from '../../src/server/index.js';
import { serveTaskServerStdio } from '../../src/server/stdio.js';
import registerDemo from '../../src/server/tools/demo.js';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';
import { stdioPair } from './stdio-pair.js';
import { StdioPeer, type Message } from './stdio-peer.js';
import { TASKS_CAPS } from './support.js';

const HOST_CAPS = { tasks: { list: {}, cancel: {} }, elicitation: { form: {} } };
const NOT_FOUND = -32602;

type Handle = { close(): Promise<void> };

/** A demo app on one memory store, and the stdio connections opened on it by a test. */
class StdioConnections {
  readonly store = new MemoryTaskStore();
  readonly app: TaskServer;
  readonly #handles: Handle[] = [];
  readonly #clients: Client[] = [];

  constructor(options: { wire2025Sessions?: false } = {}) {
    this.app = createTaskServer({ store: this.store, name: 'stdio', version: '1.0.0', ...options });
    registerDemo(this.app);
  }

  /** An SDK 1.x host (`initialize`, the 2025-11-25 wire) on its own connection as `principal`. */
  async host2025(principal?: string): Promise<Client> {
    const pair = stdioPair();
    this.#handles.push(serveTaskServerStdio(this.app, principal, pair.server));
    return this.connect(pair.host);
  }

  /** A 2026-07-28 host on its own connection as `principal`. */
  host2026(principal: string): StdioPeer {
    const peer = new StdioPeer();
    this.#handles.push(serveTaskServerStdio(this.app, principal, peer.transport));
    return peer;
  }

  async connect(transport: Transport): Promise<Client> {
    const client = new Client(
      { name: 'stdio-options-test', version: '1.0.0' },
      { capabilities: HOST_CAPS },
    );
    await client.connect(transport);
    this.#clients.push(client);
    return client;
  }

  async close(): Promise<void> {
    for (const client of this.#clients) await client.close();
    for (const handle of this.#handles) await handle.close();
    await this.app.close(500);
    await this.store.close();
  }
}

async function rejectsNotFound(what: string, call: Promise<unknown>): Promise<void> {
  await assert.rejects(call, (error: { code?: number }) => error.code === NOT_FOUND, what);
}

function assertNotFound(what: string, reply: Message): void {
  assert.equal(reply.error?.code, NOT_FOUND, `${what}: ${JSON.stringify(reply)}`);
}

describe('serveStdio(app, principal): every request on the connection is the principal’s', () => {
  let connections: StdioConnections;

  before(() => {
    connections = new StdioConnections();
  });
  after(() => connections.close());

  it('2025-11-25: alice’s task is hers to read, list and cancel; bob and anonymous get not found', async () => {
    const alice = await connections.host2025('alice');
    const bob = await connections.host2025('bob');
    const anonymous = await connections.host2025();
    const created = await alice.request(
      {
        method: 'tools/call',
        params: { name: 'confirm_delete', arguments: { filename: 'a.txt' }, task: {} },
      },
      CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    assert.equal((await connections.store.get(taskId))?.principal, 'alice');
    assert.equal((await alice.experimental.tasks.getTask(taskId)).taskId, taskId);
    const listed = (client: Client) =>
      client.experimental.tasks.listTasks().then(({ tasks }) => tasks.map((t) => t.taskId));
    assert.ok((await listed(alice)).includes(taskId));
    for (const [name, other] of [
      ['bob', bob],
      ['anonymous', anonymous],
    ] as const) {
      await rejectsNotFound(`${name}: tasks/get`, other.experimental.tasks.getTask(taskId));
      await rejectsNotFound(
        `${name}: tasks/result`,
        other.experimental.tasks.getTaskResult(taskId, CallToolResultSchema),
      );
      await rejectsNotFound(`${name}: tasks/cancel`, other.experimental.tasks.cancelTask(taskId));
      assert.ok(!(await listed(other)).includes(taskId), `${name}: tasks/list`);
    }
    assert.equal((await alice.experimental.tasks.cancelTask(taskId)).status, 'cancelled');
  });

  it('2026-07-28: alice’s task is hers to read, answer and cancel; bob gets not found', async () => {
    const alice = connections.host2026('alice');
    const bob = connections.host2026('bob');
    const created = await alice.request(
      'tools/call',
      { name: 'confirm_delete', arguments: { filename: 'b.txt' } },
      TASKS_CAPS,
    );
    const taskId = created.result?.['taskId'] as string;
    assert.equal(typeof taskId, 'string', JSON.stringify(created));
    assert.equal((await connections.store.get(taskId))?.principal, 'alice');
    const mine = await alice.request('tasks/get', { taskId }, TASKS_CAPS);
    assert.equal(mine.result?.['taskId'], taskId, JSON.stringify(mine));
    assertNotFound('bob: tasks/get', await bob.request('tasks/get', { taskId }, TASKS_CAPS));
    const answer = {
      inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
    };
    assertNotFound(
      'bob: tasks/update',
      await bob.request('tasks/update', { taskId, ...answer }, TASKS_CAPS),
    );
    assertNotFound('bob: tasks/cancel', await bob.request('tasks/cancel', { taskId }, TASKS_CAPS));
    const cancelled = await alice.request('tasks/cancel', { taskId }, TASKS_CAPS);
    assert.equal(cancelled.error, undefined, JSON.stringify(cancelled));
    assert.equal((await connections.store.get(taskId))?.status, 'cancelled');
  });
});

describe('serveStdio with wire2025Sessions: false: initialize without tasks, as on HTTP', () => {
  let connections: StdioConnections;
  let url: string;

  before(async () => {
    connections = new StdioConnections({ wire2025Sessions: false });
    url = (await connections.app.listen(0, '127.0.0.1')).url;
  });
  after(() => connections.close());

  /** What a host sees after `initialize`: the tasks capability, the tools with `execution`. */
  async function surface(client: Client): Promise<object> {
    const { tools } = await client.listTools();
    return {
      tasks: (client.getServerCapabilities() as Record<string, unknown>)['tasks'],
      execution: tools.filter((tool) => tool.execution !== undefined).map((tool) => tool.name),
    };
  }

  it('declares no tasks capability or taskSupport, like the HTTP endpoint, and runs tools inline', async () => {
    const stdio = await connections.host2025();
    const http = await connections.connect(new StreamableHTTPClientTransport(new URL(url)));
    const seen = await surface(stdio);
    assert.deepEqual(seen, await surface(http));
    assert.deepEqual(seen, { tasks: undefined, execution: [] });
    const result = await stdio.callTool({ name: 'slow_compute', arguments: { seconds: 0 } });
    assert.match(JSON.stringify(result.content), /Finished the computation/);
  });
});
