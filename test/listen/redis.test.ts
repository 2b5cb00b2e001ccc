import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MemoryLedger, TaskrailClient } from '../../src/client/index.js';
import { listenStats } from '../../src/server/listen/index.js';
import type { TaskStore } from '../../src/store/port.js';
import { openRedisStore } from '../../src/stores/redis/index.js';
import { deletePrefix, skipWithoutRedis, uniquePrefix, urlWithPrefix } from '../redis/redis-env.js';
import { waitFor } from '../helpers/wait.js';
import { notificationsOf, openListen, rpc, startApp, startHold, type TestApp } from './support.js';

const SUITE = 'listen across two servers on one Redis prefix';

if (!skipWithoutRedis(SUITE)) {
  describe(SUITE, () => {
    const prefix = uniquePrefix();
    const stores: TaskStore[] = [];
    let runner: TestApp; // runs the tasks
    let other: TestApp; // runs nothing: every change it streams came through Redis pub/sub

    before(async () => {
      for (let i = 0; i < 2; i += 1) stores.push(await openRedisStore(urlWithPrefix(prefix)));
      runner = await startApp({ store: stores[0] as TaskStore });
      other = await startApp({ store: stores[1] as TaskStore, runtime: { executor: 'none' } });
    });
    after(async () => {
      await other.close();
      await runner.close();
      for (const store of stores) await store.close();
      await deletePrefix(prefix);
    });

    it('streams a task run on one server to a subscriber on the other', async () => {
      const id = await startHold(runner.url, 'r1');
      const listen = await openListen(other.url, [id]);
      await waitFor('the initial state', () => notificationsOf(listen).length >= 1);
      runner.gates.release('r1', 'from the other replica');
      await listen.ended;
      const last = notificationsOf(listen).at(-1)?.['params'] as Record<string, unknown>;
      assert.equal(last['status'], 'completed');
      assert.deepEqual((last['result'] as { content: unknown }).content, [
        { type: 'text', text: 'from the other replica' },
      ]);
    });

    it('streams a cancel sent to one server to a subscriber on the other', async () => {
      const id = await startHold(runner.url, 'r2');
      const listen = await openListen(other.url, [id]);
      await waitFor('the initial state', () => notificationsOf(listen).length >= 1);
      await rpc(runner.url, 'tasks/cancel', { taskId: id }, { name: id });
      await listen.ended;
      assert.equal(
        (notificationsOf(listen).at(-1)?.['params'] as Record<string, unknown>)['status'],
        'cancelled',
      );
    });

    it('a client subscribed through the other server gets the outcome without tasks/get', async () => {
      const client = new TaskrailClient({ url: other.url, ledger: new MemoryLedger() });
      try {
        const id = await startHold(runner.url, 'r3');
        client.ledger.record({
          id,
          server: client.url,
          tool: 'hold',
          arguments: { key: 'r3' },
          status: 'working',
          pollIntervalMs: 1000,
          nextPollAt: Date.now() + 1000,
          ttlMs: null,
          ownerPid: process.pid,
        });
        const call = await client.attach(id);
        await waitFor(
          'subscribed on the other server',
          () => listenStats(other.app.runtime).routedTasks === 1,
        );
        runner.gates.release('r3', 'pushed across replicas');
        const outcome = await call.result();
        assert.equal(outcome.kind, 'completed');
        assert.equal(other.getsFor(id), 0);
      } finally {
        client.close();
      }
    });
  });
}
