import type { ListPage, ListQuery } from '../../store/port.js';
import type { TaskRecord } from '../../task/record.js';
import { isExpired } from '../../task/record.js';
import { clampListLimit, decodeListCursor, encodeListCursor } from '../shared/list-cursor.js';
import { decodeRecord } from './codec.js';
import { indexMember, memberId, type RedisKeys } from './keys.js';
import type { RedisClient } from './scripts.js';

const BATCH = 200;

interface Found {
  member: string;
  task: TaskRecord;
}

/**
 * Pages through the index of every bucket newest first (members sort as `createdAt:id`, so a
 * reverse lex range after the cursor's member is the next page), filtering status and tool
 * here, then merges the buckets' pages. Index entries whose task hash is gone are dropped.
 */
export async function listTasks(
  redis: RedisClient,
  keys: RedisKeys,
  query: ListQuery,
  now: number,
): Promise<ListPage> {
  const limit = clampListLimit(query.limit);
  const after = query.cursor === undefined ? undefined : decodeListCursor(query.cursor);
  const upper = after === undefined ? '+' : `(${indexMember(after.createdAt, after.id)}`;
  const pages = await Promise.all(
    keys.allBuckets.map((bucket) => {
      const index =
        query.principal === undefined
          ? keys.created(bucket)
          : keys.principal(bucket, query.principal);
      return listBucket(redis, keys, index, upper, (task) => matches(task, query, now), limit);
    }),
  );
  const found = pages.flat().sort((a, b) => (a.member < b.member ? 1 : -1));
  return page(
    found.map((entry) => entry.task),
    limit,
  );
}

/** Up to `limit + 1` matching tasks of one bucket's index, newest first. */
async function listBucket(
  redis: RedisClient,
  keys: RedisKeys,
  index: string,
  start: string,
  keep: (task: TaskRecord) => boolean,
  limit: number,
): Promise<Found[]> {
  const found: Found[] = [];
  let upper = start;
  for (;;) {
    const members = await redis.zrange(index, upper, '-', 'BYLEX', 'REV', 'LIMIT', 0, BATCH);
    const tasks = await loadAll(redis, keys, index, members);
    for (const [i, task] of tasks.entries()) {
      if (task !== undefined && keep(task)) found.push({ member: members[i] as string, task });
      if (found.length > limit) return found;
    }
    if (members.length < BATCH) return found;
    upper = `(${members[members.length - 1] as string}`;
  }
}

function matches(task: TaskRecord, query: ListQuery, now: number): boolean {
  return (
    !isExpired(task, now) &&
    (query.tool === undefined || task.tool === query.tool) &&
    (query.statuses === undefined || query.statuses.includes(task.status))
  );
}

function page(found: TaskRecord[], limit: number): ListPage {
  const tasks = found.slice(0, limit);
  const last = tasks[tasks.length - 1];
  return found.length > limit && last !== undefined
    ? { tasks, nextCursor: encodeListCursor(last) }
    : { tasks };
}

/** One pipeline per bucket: a bucket's keys share one slot, so one Cluster node. */
async function loadAll(
  redis: RedisClient,
  keys: RedisKeys,
  index: string,
  members: string[],
): Promise<Array<TaskRecord | undefined>> {
  if (members.length === 0) return [];
  const pipeline = redis.pipeline();
  for (const member of members) pipeline.hmget(keys.task(memberId(member)), 'fixed', 'data');
  const replies = (await pipeline.exec()) ?? [];
  const dangling: string[] = [];
  const tasks = replies.map(([error, value], i) => {
    if (error) throw error;
    const [fixed, data] = value as [string | null, string | null];
    if (fixed === null || data === null) {
      dangling.push(members[i] as string);
      return undefined;
    }
    return decodeRecord(fixed, data);
  });
  if (dangling.length > 0) await redis.zrem(index, ...dangling);
  return tasks;
}
