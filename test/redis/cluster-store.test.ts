import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Cluster } from 'ioredis';
import { openRedisStore } from '../../src/stores/redis/index.js';
import { taskStoreContract } from '../../src/testing/index.js';
import { newTaskId } from '../../src/task/ids.js';
import { newTaskRecord } from '../../src/task/record.js';
import { skipWithoutRedisServer, startCluster } from '../helpers/redis-cluster.js';
import { uniquePrefix } from './redis-env.js';

/**
 * The TaskStore contract on a local 3-master Redis Cluster this file starts: every script must
 * keep to one slot (Redis refuses a script touching keys of another slot), and the readers
 * that look across tasks (list, recovery scans, the sweeper) must find tasks on every master.
 */
/** Concurrency permits judge holders by their leases, which sit in other slots on a Cluster. */
const NO_PERMITS_ON_CLUSTER =
  "concurrency permits need a single Redis (the holders' leases sit in other slots)";
const CLUSTER_PERMIT_SKIPS = Object.fromEntries(
  [
    'at most limit permits per key; other keys are not affected',
    'a release frees the permit and names the oldest waiters that fit',
    'ending the lease ends the permit: an outcome, a wait, a release',
    "a crashed holder's permit comes back when its lease runs out",
    'a later task is refused while an older waiter fits, and is told to wake it',
    'a refusal can give the lease back in the same write',
    'a waiter that is no longer working stops counting; a dead token is refused',
    'a create that leases its task takes the permit asked for in the same write',
    'a claim takes the permit asked for under its new lease',
    'an outcome fenced with the permit gives it back and names the waiters',
  ].map((title) => [title, NO_PERMITS_ON_CLUSTER]),
);
/** The Redis scan reads ids and revisions only; BullMQ's job priorities order its work. */
const FAIR_SKIPS = {
  'findRunnable takes principals in turn, each one oldest first':
    'the Redis recovery scan is in creation order; BullMQ priorities give the fair order',
};

if (!skipWithoutRedisServer('redis cluster TaskStore contract')) {
  const cluster = await startCluster(3, 0);
  after(() => cluster.stop());
  const url = (prefix: string) => `${cluster.url}&prefix=${prefix}`;

  taskStoreContract(
    'redis cluster',
    async ({ clock }) => {
      const prefix = uniquePrefix();
      return {
        store: await openRedisStore(url(prefix), { clock, leaseClock: 'caller' }),
        reopen: () => openRedisStore(url(prefix), { clock, leaseClock: 'caller' }),
        cleanup: async () => undefined,
      };
    },
    { skip: { ...CLUSTER_PERMIT_SKIPS, ...FAIR_SKIPS } },
  );

  describe('redis cluster layout', () => {
    it('spreads tasks over every master, each task keeping its keys in one slot', async () => {
      const prefix = uniquePrefix();
      const store = await openRedisStore(url(prefix));
      const admin = new Cluster([{ host: '127.0.0.1', port: cluster.ports[0] as number }]);
      try {
        for (let i = 0; i < 48; i++) {
          const record = newTaskRecord(
            {
              id: newTaskId(),
              principal: 'alice',
              tool: 'hello',
              arguments: {},
              ttlMs: 60_000,
              pollIntervalMs: 500,
              idempotencyKey: `k${i}`,
            },
            Date.now(),
          );
          await store.create(record);
          await store.saveStep(record.id, 'one', i);
        }
        const perMaster = await Promise.all(
          admin.nodes('master').map(async (node) => {
            const keys = await node.keys(`${prefix}:*`);
            const slots = new Set<number>();
            for (const key of keys) slots.add(Number(await node.cluster('KEYSLOT', key)));
            return { keys: keys.length, slots: slots.size };
          }),
        );
        assert.equal(perMaster.length, 3);
        for (const master of perMaster) assert.ok(master.keys > 0, JSON.stringify(perMaster));
        const page = await store.list({ principal: 'alice', limit: 100 });
        assert.equal(page.tasks.length, 48, 'list merges every bucket');
      } finally {
        admin.disconnect();
        await store.close();
      }
    });
  });
}
