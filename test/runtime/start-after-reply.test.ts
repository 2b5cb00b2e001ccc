import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Reservation } from '../../src/runtime/api.js';
import { LocalExecutor } from '../../src/runtime/local-executor.js';
import { WorkerSlots } from '../../src/executors/shared/worker-slots.js';
import type { Child } from '../helpers/child.js';
import { startServing } from '../helpers/taskrail.js';
import { waitFor } from '../helpers/wait.js';
import { rpc, waitForStatus } from '../server/support.js';

const MAIN = resolve('dist/cli/main.js');
const TOOLS = resolve('.build/test/fixtures/reply-first-tools.js');

/** A connected pair of Unix sockets: bytes written on one are readable on the other at once. */
async function socketPair(dir: string): Promise<{ server: Server; a: Socket; b: Socket }> {
  const path = join(dir, 'pair.sock');
  const server = createServer();
  const accepted = new Promise<Socket>((done) => server.once('connection', done));
  await new Promise<void>((done) => server.listen(path, done));
  const a = createConnection(path);
  await new Promise((done) => a.once('connect', done));
  return { server, a, b: await accepted };
}

const reservers: Array<[string, () => Reservation | undefined]> = [
  [
    'LocalExecutor',
    () => {
      const executor = new LocalExecutor({ concurrency: 1 });
      executor.start(async () => undefined);
      return executor.reserve();
    },
  ],
  ['WorkerSlots', () => new WorkerSlots(1, () => undefined).reserve()],
];

describe('a reserved run starts right after the reply', () => {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-start-'));
  const children: Child[] = [];
  after(async () => {
    for (const child of children) await child.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const [name, reserve] of reservers) {
    it(`${name}: before the loop reads I/O that arrived meanwhile (a store committing in an immediate)`, async () => {
      const { server, a, b } = await socketPair(dir);
      const order: string[] = [];
      b.on('data', () => order.push('request read'));
      const started = new Promise<void>((done) => {
        // The SQLite store's group commit resolves its writes inside an immediate.
        setImmediate(() => {
          a.write('listen'); // the client's next request, readable before the run starts
          const slot = reserve();
          assert.ok(slot);
          slot.run('t1', async () => {
            order.push('run started');
            done();
          });
        });
      });
      await started;
      await waitFor('the request to be read', () => order.includes('request read'));
      assert.deepEqual(order.slice(0, 2), ['run started', 'request read']);
      a.destroy();
      b.destroy();
      server.close();
    });
  }

  for (const tool of ['hold_front', 'hold_sdk']) {
    it(`serve on SQLite sends the create reply before a CPU-bound handler starts (${tool})`, async () => {
      const { child, url } = await startServing(
        [
          'serve',
          '--port',
          '0',
          '--log-level',
          'warn',
          '--store',
          `sqlite:${join(dir, `${tool}.db`)}`,
          '--tools',
          TOOLS,
        ],
        { main: MAIN, timeoutMs: 15_000 },
      );
      children.push(child);
      const marker = join(dir, `${tool}.marker`);
      const reply = await rpc(url, 'tools/call', { name: tool, arguments: { marker } });
      const taskId = reply.body.result?.['taskId'];
      assert.equal(typeof taskId, 'string', JSON.stringify(reply.body));
      writeFileSync(marker, ''); // the handler holds the server's loop until this exists
      const task = await waitForStatus(url, taskId as string, ['completed', 'failed']);
      assert.deepEqual((task['result'] as Record<string, unknown>)['structuredContent'], {
        replyFirst: true,
      });
    });
  }
});
