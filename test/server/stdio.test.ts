import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { createTaskServer, type TaskServer } from '../../src/server/index.js';
import { serveTaskServerStdio } from '../../src/server/stdio.js';
import registerDemo from '../../src/server/tools/demo.js';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';
import { EXT, TASKS_CAPS } from './support.js';

type Message = { id?: number; result?: Record<string, unknown>; error?: { code: number } };

/** A demo server on in-memory pipes, spoken to as a 2026-07-28 stdio host would. */
class StdioPeer {
  readonly #stdin = new PassThrough();
  readonly #stdout = new PassThrough();
  readonly #waiting = new Map<number, (message: Message) => void>();
  #buffer = '';
  #nextId = 1;

  constructor() {
    this.#stdout.on('data', (chunk: Buffer) => this.#read(chunk.toString('utf8')));
  }

  get transport(): StdioServerTransport {
    return new StdioServerTransport(this.#stdin, this.#stdout);
  }

  request(method: string, params: Record<string, unknown>, caps: object): Promise<Message> {
    const id = this.#nextId++;
    const _meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'stdio-test', version: '1.0.0' },
      'io.modelcontextprotocol/clientCapabilities': caps,
    };
    const reply = new Promise<Message>((resolve) => this.#waiting.set(id, resolve));
    this.#stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta } })}\n`,
    );
    return reply;
  }

  #read(text: string): void {
    this.#buffer += text;
    let newline: number;
    while ((newline = this.#buffer.indexOf('\n')) !== -1) {
      const message = JSON.parse(this.#buffer.slice(0, newline)) as Message;
      this.#buffer = this.#buffer.slice(newline + 1);
      if (typeof message.id === 'number') this.#waiting.get(message.id)?.(message);
    }
  }
}

describe('serve over stdio', () => {
  let app: TaskServer;
  let store: MemoryTaskStore;
  let handle: { close(): Promise<void> };
  const peer = new StdioPeer();

  before(() => {
    store = new MemoryTaskStore();
    app = createTaskServer({ store, name: 'stdio', version: '1.0.0' });
    registerDemo(app);
    handle = serveTaskServerStdio(app, undefined, peer.transport);
  });

  after(async () => {
    await handle.close();
    await app.close(500);
    await store.close();
  });

  it('refuses a required tool with -32021 when the request does not declare tasks', async () => {
    const reply = await peer.request('tools/call', { name: 'failing_job', arguments: {} }, {});
    assert.equal(reply.error?.code, -32021);
    const data = (reply.error as { data?: { requiredCapabilities?: { extensions?: object } } })
      .data;
    assert.ok(data?.requiredCapabilities?.extensions?.[EXT as never]);
  });

  it('creates the task when it does, and serves tasks/get', async () => {
    const reply = await peer.request(
      'tools/call',
      { name: 'failing_job', arguments: {} },
      TASKS_CAPS,
    );
    assert.equal(reply.result?.['resultType'], 'task');
    const taskId = reply.result?.['taskId'] as string;
    const got = await peer.request('tasks/get', { taskId }, TASKS_CAPS);
    assert.equal(got.result?.['taskId'], taskId);
  });

  it('still runs optional tools synchronously without the extension', async () => {
    const reply = await peer.request(
      'tools/call',
      { name: 'slow_compute', arguments: { seconds: 0 } },
      {},
    );
    assert.equal(reply.result?.['resultType'], 'complete');
    assert.match(JSON.stringify(reply.result?.['content']), /Finished/);
  });
});
