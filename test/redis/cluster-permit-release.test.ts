import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { openRedisStore } from '../../src/stores/redis/index.js';
import type { TaskStore } from '../../src/store/port.js';
import { newTaskId } from '../../src/task/ids.js';
import { newTaskRecord } from '../../src/task/record.js';
import { complete } from '../../src/task/transitions.js';
import {
  skipWithoutRedisServer,
  startCluster,
  type LocalCluster,
} from '../helpers/redis-cluster.js';
import { waitFor } from '../helpers/wait.js';
import { uniquePrefix } from './redis-env.js';

const ASK = { key: 'k', limit: 1 };

function record(principal: string) {
  const fields = { principal, tool: 'keyed', arguments: {}, ttlMs: 60_000, pollIntervalMs: 500 };
  return newTaskRecord({ id: newTaskId(), ...fields }, Date.now());
}

/** Every command the masters run, seen through MONITOR (in execution order per node). */
async function monitorMasters(cluster: LocalCluster) {
  const commands: string[][] = [];
  const clients = cluster.ports.map((port) => new Redis({ port, host: '127.0.0.1' }));
  const monitors = await Promise.all(clients.map((client) => client.monitor()));
  for (const monitor of monitors)
    monitor.on('monitor', (_time, args: string[]) => commands.push(args));
  return {
    commands,
    /** Resolves once every master has run every command sent before this call. */
    async settled(): Promise<void> {
      const marker = `settled-${newTaskId()}`;
      await Promise.all(clients.map((client) => client.echo(marker)));
      const seen = () => commands.filter((args) => args.includes(marker)).length;
      await waitFor('every master to echo the marker', () => seen() === clients.length);
    },
    async stop(): Promise<void> {
      for (const monitor of monitors) monitor.disconnect();
      for (const client of clients) client.disconnect();
    },
  };
}

/**
 * On a Cluster the permit lives in the key's own slot (cluster-permit.lua). An outcome fenced
 * with the permit gives it back once: the write's own release names the waiters, and the lease's
 * end then finds nothing held here.
 */
if (!skipWithoutRedisServer('cluster permit released once')) {
  describe('a Redis Cluster permit ended by an outcome', () => {
    let cluster: LocalCluster | undefined;
    let store: TaskStore | undefined;
    before(async () => {
      cluster = await startCluster(3, 0);
      store = await openRedisStore(`${cluster.url}&prefix=${uniquePrefix()}`);
    });
    after(async () => {
      await store?.close();
      await cluster?.stop();
    });

    it('is released by one cluster-permit run, which names the waiter', async () => {
      const s = store as TaskStore;
      const holder = await s.create(record('alice'));
      const lease = await s.claim(holder.task.id, 'worker-1', 5000, { permit: ASK });
      assert.equal(lease?.permit?.granted, true);
      const waiter = await s.create(record('bob'), {
        lease: { owner: 'worker-2', leaseMs: 5000, permit: ASK },
      });
      assert.equal(waiter.lease?.permit?.granted, false, 'the waiter waits for the permit');
      const monitor = await monitorMasters(cluster as LocalCluster);
      try {
        const fence = { leaseToken: (lease as { token: string }).token, permit: ASK };
        const done = complete(holder.task, { content: [] }, Date.now());
        const written = await s.compareAndSet(done, holder.task.revision, fence);
        assert.ok(written.ok);
        assert.deepEqual(written.wake, [waiter.task.id], 'the waiter is named to be run');
        await monitor.settled();
        const releases = monitor.commands.filter(
          (args) => args[0]?.toLowerCase() === 'evalsha' && args.includes('release'),
        );
        const ofHolder = releases.filter((args) => args.includes(holder.task.id));
        assert.equal(ofHolder.length, 1, `release runs: ${JSON.stringify(releases)}`);
      } finally {
        await monitor.stop();
      }
    });
  });
}
