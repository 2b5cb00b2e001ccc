/**
 * The frame every partition suite shares: skipped, with its reason, when its store is not
 * there; a partition kit opened before its cases and closed after them, then the store's data
 * (a prefix, a schema) removed, or the suite's own Redis Cluster stopped.
 */
import { after, before, describe } from 'node:test';
import {
  skipWithoutRedisServer,
  startCluster,
  type LocalCluster,
} from '../helpers/redis-cluster.js';
import { skipWithoutPostgres } from '../postgres/postgres-env.js';
import { skipWithoutRedis } from '../redis/redis-env.js';
import { partitionKit, type PartitionKit, type StoreUnderTest } from './harness.js';
import { clusterUnderTest, postgresUnderTest, redisUnderTest } from './stores.js';

/** `redis-cluster`: 3 masters with a replica each, started for the suite. */
export type PartitionTarget = 'redis' | 'postgres' | 'redis-cluster';

export interface PartitionSuite {
  /** The kit, once the suite's `before` opened it. */
  readonly kit: PartitionKit;
  /** The suite's own cluster (`redis-cluster` only). */
  readonly cluster: LocalCluster;
}

interface Placed {
  store: StoreUnderTest;
  cluster?: LocalCluster;
  release(): Promise<unknown>;
}

const TARGETS: Record<PartitionTarget, { skip(title: string): boolean; place(): Promise<Placed> }> =
  {
    redis: {
      skip: skipWithoutRedis,
      place: async () => {
        const store = redisUnderTest();
        return { store, release: () => store.cleanup() };
      },
    },
    postgres: {
      skip: skipWithoutPostgres,
      place: async () => {
        const store = postgresUnderTest();
        return { store, release: () => store.cleanup() };
      },
    },
    'redis-cluster': {
      skip: skipWithoutRedisServer,
      place: async () => {
        const cluster = await startCluster(3, 1);
        return { store: clusterUnderTest(cluster), cluster, release: () => cluster.stop() };
      },
    },
  };

/** `describe(title)` on `target`; `cases` registers its `it`s and reads the kit through `suite`. */
export function partitionSuite(
  target: PartitionTarget,
  title: string,
  cases: (suite: PartitionSuite) => void,
): void {
  if (TARGETS[target].skip(title)) return;
  describe(title, () => {
    let placed: Placed | undefined;
    let kit: PartitionKit | undefined;
    before(async () => {
      placed = await TARGETS[target].place();
      kit = await partitionKit(placed.store);
    });
    after(async () => {
      await kit?.close();
      await placed?.release();
    });
    cases({
      get kit() {
        if (kit === undefined) throw new Error(`${title}: the partition kit did not open`);
        return kit;
      },
      get cluster() {
        if (placed?.cluster === undefined) throw new Error(`${title}: not on a Redis Cluster`);
        return placed.cluster;
      },
    });
  });
}
