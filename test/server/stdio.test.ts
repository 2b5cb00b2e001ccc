import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTaskServer, type TaskServer } from '../../src/server/index.js';
import { serveTaskServerStdio } from '../../src/server/stdio.js';
import registerDemo from '../../src/server/tools/demo.js';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';
import { StdioPeer } from './stdio-peer.js';
import { EXT, TASKS_CAPS } from './support.js';

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
