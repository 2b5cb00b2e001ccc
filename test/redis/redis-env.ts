import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { deleteRedisKeys } from '../helpers/redis-keys.js';

/** Where the Redis suites run; unset means skip (with a printed reason), unreachable means fail. */
export const REDIS_URL = process.env.TASKRAIL_REDIS_URL;

export const SKIP_REASON = 'TASKRAIL_REDIS_URL is not set (e.g. redis://127.0.0.1:6379/0)';

/** Registers one skipped test that says why, when there is no Redis to test against. */
export function skipWithoutRedis(suite: string): boolean {
  if (REDIS_URL !== undefined && REDIS_URL !== '') return false;
  process.stdout.write(`# skipping ${suite}: ${SKIP_REASON}\n`);
  test(suite, { skip: SKIP_REASON }, () => undefined);
  return true;
}

const RUN = `trt-${randomBytes(4).toString('hex')}`;
let counter = 0;

/** A key prefix no other test (or engineer) uses. */
export function uniquePrefix(): string {
  counter += 1;
  return `${RUN}-${counter}`;
}

/** The test Redis URL with `?prefix=` set. */
export function urlWithPrefix(prefix: string, base = REDIS_URL as string): string {
  const url = new URL(base);
  url.searchParams.set('prefix', prefix);
  return url.toString();
}

/** Deletes our keys only: never FLUSHDB on a Redis other people's tests share. */
export function deletePrefix(prefix: string, base = REDIS_URL as string): Promise<number> {
  return deleteRedisKeys(base, prefix);
}
