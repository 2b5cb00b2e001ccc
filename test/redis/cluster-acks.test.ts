import assert from 'node:assert/strict';
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
