import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TaskrailClient } from '../../src/client/host-client.js';
import { MemoryLedger } from '../../src/client/ledger-port.js';
import { waitFor } from '../helpers/wait.js';
import { startServer, type Running } from './fixture.js';
import { only2025Proxy } from './only-2025-proxy.js';
import { startSdkV1Server } from './sdk-v1-server.js';

describe('the taskrail client against a server that speaks only 2025-11-25', () => {
  let server: { url: string; close(): Promise<void> };
  let client: TaskrailClient;
  let ledger: MemoryLedger;
  before(async () => {
    server = await startSdkV1Server();
    ledger = new MemoryLedger();
    client = new TaskrailClient({
      url: server.url,
      ledger,
      background: false,
      defaultPollIntervalMs: 50,
    });
  });
  after(async () => {
    client.close();
    await server.close();
  });

  it('runs a required tool as a 2025-11-25 task, recorded in the ledger, and fetches tasks/result', async () => {
    const call = await client.callTool('v1_slow', {});
    assert.equal(typeof call.taskId, 'string');
    const outcome = await call.result();
    assert.equal(outcome.kind, 'completed');
    assert.equal(
      (outcome as { result: { content: { text: string }[] } }).result.content[0]?.text,
      'slow done',
    );
    const entry = ledger.require(call.taskId as string);
    assert.equal(entry.status, 'completed');
    assert.equal(entry.outcome, 'completed');
  });

  it('reports a failed 2025-11-25 task with isError as a tool error', async () => {
    const call = await client.callTool('v1_broken', {});
    const outcome = await call.result();
    assert.equal(outcome.kind, 'tool_error');
  });

  it('calls a tool without task support directly', async () => {
    const call = await client.callTool('v1_plain', {});
    assert.equal(call.taskId, undefined);
    assert.equal(call.outcome?.kind, 'completed');
  });
});

describe('the taskrail client on the 2025-11-25 wire of a taskrail server', () => {
  let server: Running;
  let proxy: { url: string; close(): Promise<void> };
  before(async () => {
    server = await startServer();
    proxy = await only2025Proxy(server.url);
  });
  after(async () => {
    await proxy.close();
    await server.close();
  });

  it('answers an elicitation arriving on the tasks/result stream through its input handler', async () => {
    const asked: string[] = [];
    const client = new TaskrailClient({
      url: proxy.url,
      ledger: new MemoryLedger(),
      background: false,
      input: {
        elicitation: async (params, context) => {
          asked.push(`${String(params['message'])} (${context.taskId ?? 'no task'})`);
          return { action: 'accept', content: { ok: true } };
        },
      },
    });
    try {
      const call = await client.callTool('confirm', {});
      const outcome = await call.result();
      assert.equal(outcome.kind, 'completed');
      assert.equal(
        (outcome as { result: { content: { text: string }[] } }).result.content[0]?.text,
        'confirmed',
      );
      assert.deepEqual(asked, [`Proceed? (${call.taskId})`]);
    } finally {
      client.close();
    }
  });

  it('cancels a 2025-11-25 task and waits for the cancelled status', async () => {
    const client = new TaskrailClient({
      url: proxy.url,
      ledger: new MemoryLedger(),
      background: true,
    });
    try {
      const call = await client.callTool('wait_gate', { gate: 'never' });
      await waitFor(
        'the task to run',
        async () =>
          (await server.app.runtime.getTask(call.taskId as string, 'anonymous'))?.statusMessage,
      );
      const outcome = await call.cancel();
      assert.equal(outcome.kind, 'cancelled');
    } finally {
      client.close();
    }
  });
});
