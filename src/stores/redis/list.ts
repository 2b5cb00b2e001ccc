import type { Redis } from 'ioredis';
import type { ListPage, ListQuery } from '../../store/port.js';
import type { TaskRecord } from '../../task/record.js';
import { isExpired } from '../../task/record.js';
import { clampListLimit, decodeListCursor, encodeListCursor } from '../shared/list-cursor.js';
import { decodeRecord } from './codec.js';
import { indexMember, memberId, type RedisKeys } from './keys.js';

const BATCH = 200;

/**
 * Pages through an index newest first (members sort as `createdAt:id`, so a reverse lex range
 * after the cursor's member is the next page) and filters status and tool here. Index entries
 * whose task hash already expired are dropped on the way.
 */
export async function listTasks(
  redis: Redis,
  keys: RedisKeys,
  query: ListQuery,
  now: number,
): Promise<ListPage> {
  const limit = clampListLimit(query.limit);
  const index = query.principal === undefined ? keys.created : keys.principal(query.principal);
  const after = query.cursor === undefined ? undefined : decodeListCursor(query.cursor);
  let upper = after === undefined ? '+' : `(${indexMember(after.createdAt, after.id)}`;
  const found: TaskRecord[] = [];
  for (;;) {
    const members = await redis.zrange(index, upper, '-', 'BYLEX', 'REV', 'LIMIT', 0, BATCH);
    const tasks = await loadAll(redis, keys, index, members);
    for (const task of tasks) {
      if (task !== undefined && matches(task, query, now)) found.push(task);
      if (found.length > limit) return page(found, limit);
    }
    if (members.length < BATCH) return page(found, limit);
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

async function loadAll(
  redis: Redis,
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
