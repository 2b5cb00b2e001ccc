import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Cluster } from 'ioredis';
import { openRedisStore } from '../../src/stores/redis/index.js';
import { taskStoreContract } from '../../src/testing/index.js';
import { QUEUE_CAP_RACE } from '../../src/testing/store-contract/queue-cap.js';
import { newTaskId } from '../../src/task/ids.js';
import { newTaskRecord } from '../../src/task/record.js';
import { skipWithoutRedisServer, startCluster } from '../helpers/redis-cluster.js';
import { uniquePrefix } from './redis-env.js';

/**
 * The TaskStore contract on a local 3-master Redis Cluster this file starts: every script must
 * keep to one slot (Redis refuses a script touching keys of another slot), and the readers
 * that look across tasks (list, recovery scans, the sweeper) must find tasks on every master.
 */
/** A principal's unfinished tasks sit in every bucket's slot: counted before the write. */
const QUEUE_CAP_SKIPS = {
  [QUEUE_CAP_RACE]:
    'a Cluster counts the unfinished tasks across slots before it writes: racers can pass by one each',
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
    { skip: QUEUE_CAP_SKIPS },
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
