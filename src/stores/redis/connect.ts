import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { TaskrailError } from '../../task/errors.js';
import { boundClusterCommands } from './cluster-patience.js';
import type { RedisClient } from './scripts.js';
import type { RedisLocation } from './url.js';
import { backoffDelayMs, type Backoff } from '../../task/backoff.js';
import { timerDelay } from '../../task/timers.js';

export type WarningSink = (message: string) => void;

export interface ConnectOptions {
  /** How long the first connection may take. Default 5 s. */
  connectTimeoutMs?: number;
  warn: WarningSink;
  outages: OutageReporter;
}

/** How often a Cluster client re-reads the slot map, to notice a failover nobody wrote through. */
const TOPOLOGY_CHECK_MS = 5_000;

/**
 * A command with no reply after this fails as store trouble ("Command timed out"): over a link
 * that silently drops packets the socket never errors, so without it a request would hang until
 * the link heals. Store commands are short scripts; none blocks (BullMQ's blocking commands run
 * on its own connections, which do not get this).
 */
export const COMMAND_TIMEOUT_MS = 5_000;

/** How long QUIT may wait for its answer before the connection is simply dropped. */
const QUIT_WAIT_MS = 2_000;

/**
 * Closes a connection politely (QUIT), or drops it when QUIT gets no answer in time: over a
 * link that drops packets, or on a connection without a command time-out (a subscriber, a
 * Cluster's, BullMQ's), QUIT alone would wait until the link heals.
 */
export async function quitWithin(client: RedisClient, ms = QUIT_WAIT_MS): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>(
    (resolve) => (timer = setTimeout(() => resolve('late'), timerDelay(ms))),
  );
  const quit = client.quit().then(
    () => 'quit' as const,
    () => 'quit' as const,
  );
  if ((await Promise.race([quit, late])) === 'late') client.disconnect();
  clearTimeout(timer);
}

/** ioredis counts reconnect attempts from 1: 200 ms, 400 ms, … up to 2 s. */
const RECONNECT: Backoff = { backoffMs: 200, maxBackoffMs: 2000 };

function reconnectDelay(attempt: number): number {
  return backoffDelayMs(RECONNECT, attempt);
}

/**
 * A client for a store URL: ioredis `Cluster` for `?cluster=1` (node options go to every node
 * it discovers), else one `Redis`. Nothing connects before the first command or `connect()`.
 */
export function newRedisClient(location: RedisLocation, options: RedisOptions = {}): RedisClient {
  const seeds = location.cluster;
  if (seeds === undefined) return new Redis(location.connectUrl, options);
  const { lazyConnect, ...nodeOptions } = options;
  return new Cluster(seeds.nodes, {
    lazyConnect: lazyConnect ?? false,
    redisOptions: {
      ...nodeOptions,
      ...(seeds.username === undefined ? {} : { username: seeds.username }),
      ...(seeds.password === undefined ? {} : { password: seeds.password }),
      ...(seeds.tls ? { tls: {} } : {}),
    },
    // Slots move during a failover: wait for the cluster to settle rather than fail at once.
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 200,
    retryDelayOnTryAgain: 100,
    // Notices a failover even where no command was redirected (see resyncOnFailover).
    slotsRefreshInterval: TOPOLOGY_CHECK_MS,
  });
}

/** Once connected, reconnect with backoff; before that, fail fast. */
function setReconnecting(redis: RedisClient, strategy: (attempt: number) => number | null): void {
  if (redis instanceof Cluster) redis.options.clusterRetryStrategy = strategy;
  else redis.options.retryStrategy = strategy;
}

/**
 * Connects, failing fast with STORE_UNAVAILABLE (never retrying forever) when the server cannot
 * be reached or refuses the credentials. After the first success the client reconnects on its own.
 */
export async function connectRedis(
  location: RedisLocation,
  options: ConnectOptions,
): Promise<RedisClient> {
  let lastError: Error | undefined;
  const redis = newRedisClient(location, {
    lazyConnect: true,
    connectTimeout: options.connectTimeoutMs ?? 5000,
    maxRetriesPerRequest: 3,
    // A single Redis that stops answering gets no failover, so a command gives up and the
    // request is answered 503. A Cluster master that stops answering is failed over, and a write
    // cut off after 5 s would be refused although the promoted replica takes it a moment later:
    // a Cluster's commands get a bound that waits out a failover (cluster-patience.ts).
    ...(location.cluster === undefined ? { commandTimeout: COMMAND_TIMEOUT_MS } : {}),
  });
  if (redis instanceof Cluster) boundClusterCommands(redis);
  setReconnecting(redis, () => null);
  const onError = (error: Error) => {
    lastError = error;
  };
  redis.on('error', onError);
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    const reason = (lastError ?? (error as Error)).message;
    throw new TaskrailError(
      'STORE_UNAVAILABLE',
      `cannot reach the redis task store at ${location.safeUrl}: ${reason}`,
      { cause: lastError ?? error },
    );
  }
  redis.off('error', onError);
  setReconnecting(redis, reconnectDelay);
  options.outages.watch(redis);
  return redis;
}

/**
 * One warning when a store's connections lose Redis, one when all are back: an unhandled
 * 'error' event would crash the process, and one line per failed reconnect attempt would bury
 * the log. Watch every connection of one store with the same reporter.
 */
export class OutageReporter {
  readonly #location: RedisLocation;
  readonly #warn: WarningSink;
  readonly #down = new Set<RedisClient>();
  #reported = false;

  constructor(location: RedisLocation, warn: WarningSink) {
    this.#location = location;
    this.#warn = warn;
  }

  watch(redis: RedisClient): void {
    redis.on('error', (error: Error) => {
      this.#down.add(redis);
      if (this.#reported) return;
      this.#reported = true;
      this.#warn(`redis task store ${this.#location.safeUrl}: ${error.message} (reconnecting)`);
    });
    redis.on('ready', () => {
      this.#down.delete(redis);
      if (!this.#reported || this.#down.size > 0) return;
      this.#reported = false;
      this.#warn(`redis task store ${this.#location.safeUrl}: reconnected`);
    });
  }
}

/**
 * Evicted keys would silently lose tasks. Managed services may forbid CONFIG; then we cannot
 * tell, and say nothing.
 */
export async function checkEvictionPolicy(
  redis: RedisClient,
  location: RedisLocation,
  warn: WarningSink,
): Promise<void> {
  let policy: string | undefined;
  try {
    const reply = (await redis.config('GET', 'maxmemory-policy')) as string[];
    policy = reply[1];
  } catch {
    return;
  }
  const warning = evictionWarning(policy, location.safeUrl);
  if (warning !== undefined) warn(warning);
}

export function evictionWarning(policy: string | undefined, safeUrl: string): string | undefined {
  if (policy === undefined || policy === 'noeviction') return undefined;
  return (
    `redis at ${safeUrl} has maxmemory-policy '${policy}': under memory pressure it may evict ` +
    `task keys and lose tasks. Set 'maxmemory-policy noeviction' (see docs/deployment.md).`
  );
}
