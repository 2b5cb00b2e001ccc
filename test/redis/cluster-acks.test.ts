import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { Cluster, Redis } from 'ioredis';
import type { TaskStore } from '../../src/store/port.js';
import { RedisKeys } from '../../src/stores/redis/keys.js';
import { openRedisStore } from '../../src/stores/redis/index.js';
import { ReplicaAcks } from '../../src/stores/redis/replica-acks.js';
import { newTaskId } from '../../src/task/ids.js';
import { newTaskRecord, type TaskRecord } from '../../src/task/record.js';
import {
  skipWithoutRedisServer,
  startCluster,
  type LocalCluster,
} from '../helpers/redis-cluster.js';
import { waitFor } from '../helpers/wait.js';
import { REDIS_URL, skipWithoutRedis, uniquePrefix, urlWithPrefix } from './redis-env.js';

const BUCKETS = 16;

/** Whether the node answers a PING within 300 ms (redis-cli is killed if not). */
function answers(port: number): boolean {
  const ping = spawnSync('redis-cli', ['-p', String(port), 'PING'], {
    encoding: 'utf8',
    timeout: 300,
  });
  return ping.stdout?.trim() === 'PONG';
}

function working(): TaskRecord {
  const input = { id: newTaskId(), principal: 'p', tool: 'once', arguments: {}, ttlMs: 60_000 };
  return newTaskRecord({ ...input, pollIntervalMs: 500 }, Date.now());
}

/**
 * Writes a failover must not lose (creates; the claim of a `retry: false` task) reach the
 * replicas of their slot before they count (see replica-acks.ts), on a local Cluster of 3
 * masters with a replica each.
 */
if (!skipWithoutRedisServer('redis cluster replica acknowledgements')) {
  describe('redis cluster: writes confirmed by the replicas', () => {
    let cluster: LocalCluster;
    let store: TaskStore;
    let keys: RedisKeys;

    before(async () => {
      cluster = await startCluster(3, 1);
      const prefix = uniquePrefix();
      store = await openRedisStore(`${cluster.url}&prefix=${prefix}`);
      keys = new RedisKeys(prefix, BUCKETS);
    });
    after(async () => {
      await store?.close();
      await cluster?.stop();
    });

    /** The field as the slot's replica has it (read with READONLY on the replica itself). */
    async function onReplica(key: string, field: string): Promise<string | null> {
      const slot = Number(cluster.cli(cluster.ports[0] as number, 'CLUSTER', 'KEYSLOT', key));
      const replica = new Redis(cluster.ownerOf(slot).replica as number, '127.0.0.1');
      try {
        await replica.readonly();
        return await replica.hget(key, field);
      } finally {
        replica.disconnect();
      }
    }

    it('tells listeners to re-read what they follow after a failover', async () => {
      let resyncs = 0;
      const off = store.events.on('store:resync', () => (resyncs += 1));
      try {
        const { replica } = cluster.ownerOf(0);
        cluster.cli(replica as number, 'CLUSTER', 'FAILOVER');
        await waitFor('a resync after the failover', () => resyncs > 0, { timeoutMs: 20_000 });
      } finally {
        off();
      }
    });

    it('answers a create once the replica has the task, and a claim as durable', async () => {
      const task = working();
      await store.create(task);
      assert.notEqual(await onReplica(keys.task(task.id), 'member'), null);
      const lease = await store.claim(task.id, 'me', 10_000);
      assert.ok(lease !== undefined);
      assert.equal(await store.confirmLease?.(task.id, lease.token), 'durable');
      assert.equal(await onReplica(keys.task(task.id), 'leaseToken'), lease.token);
    });

    it('says lost when the slot no longer holds the claim', async () => {
      const task = working();
      await store.create(task);
      const lease = await store.claim(task.id, 'me', 10_000);
      assert.ok(lease !== undefined);
      // As after a failover to a replica that never received the claim.
      await store.releaseLease(task.id, lease.token);
      assert.equal(await store.confirmLease?.(task.id, lease.token), 'lost');
    });

    it('says unconfirmed while a replica is gone, durable once the cluster drops it', async () => {
      const task = working();
      await store.create(task);
      const lease = await store.claim(task.id, 'me', 60_000);
      assert.ok(lease !== undefined);
      const bucket = keys.bucketOf(task.id);
      const slot = Number(
        cluster.cli(cluster.ports[0] as number, 'CLUSTER', 'KEYSLOT', keys.task(task.id)),
      );
      const client = new Cluster([{ host: '127.0.0.1', port: cluster.ports[0] as number }]);
      try {
        await client.ping();
        const acks = new ReplicaAcks(client);
        assert.equal(acks.replicasOf(bucket), 1);
        cluster.kill(cluster.ownerOf(slot).replica as number);
        const check = { key: keys.task(task.id), field: 'leaseToken', value: lease.token };
        assert.equal(await acks.confirm(bucket, check, 300), 'unconfirmed');
        // Once marked failed, CLUSTER SLOTS no longer lists it: nothing left to wait for.
        await waitFor(
          'the cluster to drop the dead replica from the slot',
          async () => (await acks.confirm(bucket, check, 300)) === 'durable',
          { timeoutMs: 20_000, intervalMs: 200 },
        );
      } finally {
        client.disconnect();
      }
    });

    // Last: it leaves the frozen master a replica of its replacement.
    it('writes again what a master frozen past its failover answered for', async () => {
      // An earlier test killed a replica: ask the nodes that are up.
      const up = cluster.ports.filter((port) => {
        try {
          return cluster.cli(port, 'PING').trim() === 'PONG';
        } catch {
          return false;
        }
      });
      const seed = up[0] as number;
      const { id, slot } = taskWithReplica(seed);
      const [key, bucket] = [keys.task(id), keys.bucketOf(id)];
      const { master: frozen, replica: standby } = cluster.ownerOf(slot);
      // Its full resync of the woken master, once promoted, starts at once (default: after 5 s).
      cluster.cli(standby as number, 'CONFIG', 'SET', 'repl-diskless-sync-delay', '0');
      const client = new Cluster([{ host: '127.0.0.1', port: seed }]);
      const sleeper = new Redis(frozen, '127.0.0.1');
      try {
        await client.ping();
        const acks = new ReplicaAcks(client);
        // Past the node timeout (1.5 s): the cluster promotes the replica meanwhile.
        const sleeping = sleeper.call('DEBUG', 'SLEEP', '6');
        await waitFor('the master to freeze', () => !answers(frozen));
        const check = { key, field: 'member', value: id };
        const writing = acks.write(bucket, (pipeline) => pipeline.hset(key, 'member', id), check, {
          budgetMs: 1_000,
          refused: () => false,
        });
        const other = up.find((port) => port !== frozen) as number;
        await waitFor('the replica to take over', () => !stillMaster(other, frozen), {
          timeoutMs: 20_000,
        });
        await sleeping;
        // The frozen master answers the write when it wakes, replaced already: no verdict.
        const { durability } = await writing;
        assert.equal(durability, 'durable');
        assert.equal(await client.hget(key, 'member'), id);
      } finally {
        sleeper.disconnect();
        client.disconnect();
      }
    });

    /** Whether `asked` sees `port` as a master in good standing. */
    function stillMaster(asked: number, port: number): boolean {
      const nodes = cluster.cli(asked, 'CLUSTER', 'NODES');
      const line = nodes.split('\n').find((l) => l.includes(`:${port}@`)) ?? '';
      return line.includes('master') && !line.includes('fail');
    }

    /** A task id whose slot's master has a replica. */
    function taskWithReplica(asked: number): { id: string; slot: number } {
      for (;;) {
        const id = newTaskId();
        const slot = Number(cluster.cli(asked, 'CLUSTER', 'KEYSLOT', keys.task(id)));
        if (cluster.ownerOf(slot).replica !== undefined) return { id, slot };
      }
    }
  });
}

if (!skipWithoutRedis('redis replica acknowledgements on a single Redis')) {
  describe('redis: a single Redis pays nothing for replica acknowledgements', () => {
    it('sends no WAIT for a create or a claim confirmation', async () => {
      const prefix = uniquePrefix();
      const store = await openRedisStore(urlWithPrefix(prefix));
      const admin = new Redis(REDIS_URL as string);
      try {
        const waits = async () =>
          /cmdstat_wait:calls=(\d+)/.exec(await admin.info('commandstats'))?.[1] ?? '0';
        const before = await waits();
        const task = working();
        await store.create(task);
        const lease = await store.claim(task.id, 'me', 10_000);
        assert.ok(lease !== undefined);
        assert.equal(await store.confirmLease?.(task.id, lease.token), 'durable');
        assert.equal(await waits(), before);
      } finally {
        admin.disconnect();
        await store.close();
      }
    });
  });
}
