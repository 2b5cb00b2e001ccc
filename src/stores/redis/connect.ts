import { Redis } from 'ioredis';
import { TaskrailError } from '../../task/errors.js';
import type { RedisLocation } from './url.js';

export type WarningSink = (message: string) => void;

export interface ConnectOptions {
  /** How long the first connection may take. Default 5 s. */
  connectTimeoutMs?: number;
  warn: WarningSink;
}

/** Once connected, reconnect with backoff; before that, fail fast. */
function reconnectDelay(attempt: number): number {
  return Math.min(100 * 2 ** attempt, 2000);
}

/**
 * Connects, failing fast with STORE_UNAVAILABLE (never retrying forever) when the server cannot
 * be reached or refuses the credentials. After the first success the client reconnects on its own.
 */
export async function connectRedis(
  location: RedisLocation,
  options: ConnectOptions,
): Promise<Redis> {
  let lastError: Error | undefined;
  const redis = new Redis(location.connectUrl, {
    lazyConnect: true,
    connectTimeout: options.connectTimeoutMs ?? 5000,
    retryStrategy: () => null,
    maxRetriesPerRequest: 3,
  });
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
  redis.options.retryStrategy = reconnectDelay;
  reportErrors(redis, location, options.warn);
  return redis;
}

/** An unhandled 'error' event would crash the process; report each outage once instead. */
export function reportErrors(redis: Redis, location: RedisLocation, warn: WarningSink): void {
  let reported = false;
  redis.on('error', (error: Error) => {
    if (reported) return;
    reported = true;
    warn(`redis task store ${location.safeUrl}: ${error.message} (reconnecting)`);
  });
  redis.on('ready', () => {
    reported = false;
  });
}

/**
 * Evicted keys would silently lose tasks. Managed services may forbid CONFIG; then we cannot
 * tell, and say nothing.
 */
export async function checkEvictionPolicy(
  redis: Redis,
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
