import { randomBytes } from 'node:crypto';
import { Cluster } from 'ioredis';
import type { TaskStore } from '../../store/port.js';
import { systemClock, type Clock } from '../../task/time.js';
import {
  checkEvictionPolicy,
  connectRedis,
  evictionWarning as evictionWarningFor,
  OutageReporter,
} from './connect.js';
import { resyncOnFailover, subscribeEvents } from './pubsub.js';
import { RedisTaskStore } from './redis-store.js';
import { parseRedisUrl } from './url.js';

export { parseRedisUrl, DEFAULT_PREFIX, type RedisLocation } from './url.js';

// Declared here rather than re-exported, so that this entry's public types never mention
// ioredis: an app type-checks against them whether or not the driver is installed.
export type WarningSink = (message: string) => void;

/** The start-up warning for a Redis `maxmemory-policy` that may evict task keys, if any. */
export const evictionWarning: (policy: string | undefined, safeUrl: string) => string | undefined =
  evictionWarningFor;

export interface RedisStoreOptions {
  clock?: Clock;
  /** Where start-up and connection warnings go. Default: `process.emitWarning`. */
  onWarning?: WarningSink;
  /** First-connection timeout. Default 5 s. */
  connectTimeoutMs?: number;
  /** Redis deletes an expired task's keys this long after its expiresAt. Default 10 min. */
  expiryGraceMs?: number;
  /**
   * Whose clock judges leases. Default `redis`: the server's TIME, so workers with skewed
   * clocks cannot take each other's live leases. `caller` uses `clock` (tests with a fake one).
   */
  leaseClock?: 'redis' | 'caller';
}

/**
 * How many hash slots a Cluster store spreads its tasks over (each slot lives on one master).
 * Every process sharing a store must agree, so this is fixed, not an option.
 */
const CLUSTER_BUCKETS = 16;

const defaultWarn: WarningSink = (message) => process.emitWarning(`taskrail: ${message}`);

/**
 * Opens the task store at `redis://[user:pass@]host:port/db[?prefix=NAME]`, or on a Redis
 * Cluster at `redis://host:port?cluster=1[&nodes=host:port,…]`: connects (failing
 * fast with STORE_UNAVAILABLE), warns when Redis may evict keys, and subscribes to the events
 * channel so this store re-emits every other replica's writes.
 */
export async function openRedisStore(
  url: string,
  options: RedisStoreOptions = {},
): Promise<TaskStore> {
  const location = parseRedisUrl(url);
  const warn = options.onWarning ?? defaultWarn;
  const outages = new OutageReporter(location, warn);
  const connectOptions = {
    warn,
    outages,
    ...(options.connectTimeoutMs === undefined
      ? {}
      : { connectTimeoutMs: options.connectTimeoutMs }),
  };
  const redis = await connectRedis(location, connectOptions);
  // A Cluster's subscriber is a Cluster too; a single Redis's is one more connection, which
  // subscribes again itself after a reconnection (see subscribeEvents).
  const subscriber =
    redis instanceof Cluster ? redis.duplicate() : redis.duplicate({ autoResubscribe: false });
  outages.watch(subscriber);
  const origin = randomBytes(9).toString('base64url');
  const store = new RedisTaskStore({
    redis,
    subscriber,
    prefix: location.prefix,
    buckets: location.cluster === undefined ? 1 : CLUSTER_BUCKETS,
    description: `redis task store ${location.safeUrl}`,
    clock: options.clock ?? systemClock,
    origin,
    expiryGraceMs: options.expiryGraceMs ?? 10 * 60_000,
    ...(options.leaseClock === undefined ? {} : { leaseClock: options.leaseClock }),
    warn,
  });
  try {
    await checkEvictionPolicy(redis, location, warn);
    await subscribeEvents(subscriber, `${location.prefix}:events`, origin, store, warn);
    resyncOnFailover(redis, store);
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}
