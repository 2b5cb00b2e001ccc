import { TaskrailError } from '../../task/errors.js';

/**
 * One table of what ioredis raises when it cannot reach the server; each is store trouble.
 * test/redis/redis-connection-errors.test.ts produces them for real.
 */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EHOSTDOWN',
  'ENETDOWN',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/** Replies of a server that is up but cannot take writes for now (loading, failover, memory). */
const TRANSIENT_REPLY =
  /^(LOADING|READONLY|MASTERDOWN|BUSY|TRYAGAIN|CLUSTERDOWN|OOM|MISCONF|NOREPLICAS)\b/;

/** ioredis's own messages: a closed or offline connection, a command timeout, a cluster without nodes. */
const CLIENT_SIDE =
  /Connection is closed|Stream isn't writeable|enableOfflineQueue|Command timed out|Reached the max retries per request limit|None of startup nodes is available|Failed to refresh slots cache|Cluster isn't ready|Too many Cluster redirections/;

function isTransient(error: Error): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
  if (error.name === 'MaxRetriesPerRequestError') return true;
  return CLIENT_SIDE.test(error.message) || TRANSIENT_REPLY.test(error.message);
}

/**
 * A lost connection, a timeout or a server that refuses writes for now becomes
 * STORE_UNAVAILABLE with a message that names no URL and no client internals (the original
 * stays in `cause`). Anything else (a script bug, bad data) passes through unchanged.
 */
export function redisStoreError(error: unknown): unknown {
  if (!(error instanceof Error) || error instanceof TaskrailError) return error;
  if (!isTransient(error)) return error;
  const full = /^(OOM|MISCONF)\b/.test(error.message);
  return new TaskrailError(
    'STORE_UNAVAILABLE',
    full
      ? 'the task store is out of memory or cannot persist; retry later'
      : 'the task store is unreachable; retry later',
    { cause: error },
  );
}

/**
 * Wraps the named async methods of a prototype so their failures are classified. Done once at
 * the class, not at each of the ~20 Redis calls inside them, so a new call cannot forget it.
 */
export function classifyFailures(prototype: object, methods: readonly string[]): void {
  for (const name of methods) {
    const original = Reflect.get(prototype, name) as (...args: unknown[]) => Promise<unknown>;
    Reflect.set(prototype, name, async function (this: unknown, ...args: unknown[]) {
      try {
        return await original.apply(this, args);
      } catch (error) {
        throw redisStoreError(error);
      }
    });
  }
}
