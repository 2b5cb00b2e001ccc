import { setTimeout as sleep } from 'node:timers/promises';
import { isExpired, type TaskRecord } from '../../task/record.js';
import { decodeRecord } from './codec.js';
import type { RedisKeys } from './keys.js';
import type { RedisClient, RedisScripts } from './scripts.js';

/**
 * A reservation whose task still does not exist after this long was left by a creator that
 * died between reserving and creating; a later create takes the key over.
 */
export const ABANDONED_RESERVATION_MS = 5_000;
const POLL_MS = 10;

export interface IdempotencyParts {
  redis: RedisClient;
  scripts: RedisScripts;
  keys: RedisKeys;
}

export type Reservation = { reserved: true } | { reserved: false; earlier: TaskRecord };

/**
 * Reserves `key` for `task`, or finds the live task it already names. The key and the task sit
 * in different buckets (on a Cluster, different slots), so this is a step of its own before the
 * create script: a reservation naming a task that does not exist yet is being created by
 * someone else (wait for it) unless it is old (take it over); one naming an expired task is free.
 */
export async function reserveIdempotencyKey(
  parts: IdempotencyParts,
  key: string,
  task: TaskRecord,
  redisExpiryMs: number | '',
  now: number,
): Promise<Reservation> {
  let replace = '';
  for (;;) {
    const reply = (await parts.scripts.run(
      'reserve-idempotency',
      [key],
      [task.id, replace, redisExpiryMs],
    )) as [number, string?, string?, number?];
    if (reply[0] === 1) return { reserved: true };
    const [, value = '', earlierId = '', ageMs = 0] = reply;
    const earlier = await readTask(parts, earlierId);
    if (earlier !== undefined && !isExpired(earlier, now)) return { reserved: false, earlier };
    if (earlier !== undefined || earlierId === task.id || ageMs >= ABANDONED_RESERVATION_MS) {
      replace = value;
      continue;
    }
    await sleep(POLL_MS);
  }
}

/** Frees `key` if it still names `taskId` (a failed create, or a swept task). */
export async function forgetIdempotencyKey(
  parts: Pick<IdempotencyParts, 'scripts'>,
  key: string,
  taskId: string,
): Promise<void> {
  await parts.scripts.run('forget-idempotency', [key], [taskId]);
}

async function readTask(parts: IdempotencyParts, id: string): Promise<TaskRecord | undefined> {
  const [fixed, data] = await parts.redis.hmget(parts.keys.task(id), 'fixed', 'data');
  return fixed === null || data === null ? undefined : decodeRecord(fixed, data);
}
