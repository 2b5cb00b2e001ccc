/** The stores the partition suites run on, each isolated by its own prefix or schema. */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { openPostgresStore } from '../../src/stores/postgres/index.js';
import { openRedisStore } from '../../src/stores/redis/index.js';
import { dropSchema, POSTGRES_URL, uniqueSchema, urlWithSchema } from '../postgres/postgres-env.js';
import { deletePrefix, REDIS_URL, uniquePrefix, urlWithPrefix } from '../redis/redis-env.js';
import type { RelayOptions, TcpRelay } from '../helpers/tcp-relay.js';
import type { LocalCluster } from '../helpers/redis-cluster.js';
import { startRelayGroup, type RelayGroup } from './relay-group.js';
import type { StoreUnderTest } from './harness.js';

const CLUSTER_NAT = '.build/test/fixtures/cluster-nat.js';

function portOf(url: string, fallback: number): number {
  const port = new URL(url).port;
  return port === '' ? fallback : Number(port);
}

/** The URL with its host and port those of the relay, its path and query kept. */
const through = (url: string) => (relay: TcpRelay) => relay.urlFor(url);

export function redisUnderTest(): StoreUnderTest & { cleanup(): Promise<unknown> } {
  const prefix = uniquePrefix();
  const url = urlWithPrefix(prefix);
  return {
    url,
    target: { port: portOf(REDIS_URL as string, 6379) },
    urlThrough: through(url),
    openObserver: () => openRedisStore(url),
    cleanup: () => deletePrefix(prefix),
  };
}

export function postgresUnderTest(): StoreUnderTest & { cleanup(): Promise<unknown> } {
  const schema = uniqueSchema();
  const url = urlWithSchema(schema);
  return {
    url,
    target: { port: portOf(POSTGRES_URL as string, 5432) },
    urlThrough: through(url),
    openObserver: () => openPostgresStore(url),
    cleanup: () => dropSchema(schema),
  };
}

/** A key prefix on a local Redis Cluster; processes behind a relay reach every node through it. */
export function clusterUnderTest(cluster: LocalCluster): StoreUnderTest {
  const url = `${cluster.url}&prefix=${uniquePrefix()}`;
  return {
    url,
    target: { port: cluster.ports[0] as number },
    urlThrough: through(url),
    startRelay: (options?: RelayOptions) => startRelayGroup(cluster.ports, options),
    envThrough: async (relay) => ({
      TASKRAIL_TEST_NAT_MAP: JSON.stringify((relay as RelayGroup).natMap()),
      // A CLI process (`taskrail serve`) loads the map before anything connects.
      NODE_OPTIONS: `--import=${pathToFileURL(resolve(CLUSTER_NAT))}`,
    }),
    openObserver: () => openRedisStore(url),
  };
}
