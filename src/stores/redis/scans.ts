import type { LeaseHolder, RunnableTask } from '../../store/port.js';
import { roundRobinByPrincipal } from '../shared/round-robin.js';
import { memberCreatedAt, memberId, type RedisKeys } from './keys.js';
import { callScript, type RedisClient, type RedisScripts } from './scripts.js';
import { forgetIdempotencyKey } from './idempotency.js';

/** What the cross-task readers need; each looks at every bucket, one Cluster slot at a time. */
export interface ScanParts {
  redis: RedisClient;
  scripts: RedisScripts;
  keys: RedisKeys;
  channel: string;
  origin: string;
}

type Hmget = (string | null)[];

/** Takes one from each list in turn, so no bucket starves the others. */
function interleave<T>(lists: T[][], limit: number): T[] {
  const out: T[] = [];
  for (let i = 0; out.length < limit && lists.some((list) => i < list.length); i++) {
    for (const list of lists) if (i < list.length && out.length < limit) out.push(list[i] as T);
  }
  return out;
}

async function leaseRange(
  parts: ScanParts,
  bucket: number,
  which: 'runnable' | 'leased',
  offset: number,
  count: number,
  callerLeaseNow: number | '',
): Promise<{ leaseTime: number; members: string[] }> {
  const reply = (await parts.scripts.run(
    'lease-range',
    [parts.keys.working(bucket)],
    [which, offset, count, callerLeaseNow],
  )) as [number, ...string[]];
  const [leaseTime, ...members] = reply;
  return { leaseTime: Number(leaseTime), members };
}

/**
 * Ids and revisions of live working tasks nobody holds a live lease on, up to `limit`, taken
 * round robin across principals (fair share), each principal's oldest first. The turns are
 * judged within what the scan reads: per bucket the first batch of `max(limit, 50)` runnable
 * tasks, more batches only while fewer than `limit` were live.
 */
export async function findRunnable(
  parts: ScanParts,
  limit: number,
  now: number,
  callerLeaseNow: number | '',
): Promise<RunnableTask[]> {
  const perBucket = await Promise.all(
    parts.keys.allBuckets.map(async (bucket) => {
      const runnable: RunnableCandidate[] = [];
      const batch = Math.max(limit, 50);
      for (let offset = 0; ; offset += batch) {
        const { members } = await leaseRange(
          parts,
          bucket,
          'runnable',
          offset,
          batch,
          callerLeaseNow,
        );
        runnable.push(...(await liveWorking(parts, members, now)));
        if (runnable.length >= limit || members.length < batch) return runnable;
      }
    }),
  );
  const oldestFirst = perBucket.flat().sort((a, b) => a.order - b.order || (a.id < b.id ? -1 : 1));
  return roundRobinByPrincipal(oldestFirst)
    .slice(0, Math.max(0, limit))
    .map(({ id, revision }) => ({ id, revision }));
}

/**
 * The given fields of each task of one bucket's batch, in one call (`read-tasks`): a scan
 * costs commands per bucket and batch, not per task, however long the backlog.
 */
export async function readTasks(
  parts: ScanParts,
  ids: string[],
  fields: string[],
): Promise<Hmget[]> {
  if (ids.length === 0) return [];
  const keys = ids.map((id) => parts.keys.task(id));
  const flat = (await parts.scripts.run('read-tasks', keys, fields)) as Hmget;
  return ids.map((_id, i) => flat.slice(i * fields.length, (i + 1) * fields.length));
}

export function isLive(expiresAt: string | null | undefined, now: number): boolean {
  return expiresAt === '' || (typeof expiresAt === 'string' && Number(expiresAt) > now);
}

interface RunnableCandidate extends RunnableTask {
  /** Creation time, from the index member. */
  order: number;
  /** The principal as its index key ends (encoded): the same in every bucket. */
  principal: string;
}

/** Keeps the working tasks that have not expired (or vanished) from one bucket's batch. */
async function liveWorking(
  parts: ScanParts,
  members: string[],
  now: number,
): Promise<RunnableCandidate[]> {
  const ids = members.map(memberId);
  const rows = await readTasks(parts, ids, ['status', 'expiresAt', 'revision', 'pindex']);
  const live: RunnableCandidate[] = [];
  ids.forEach((id, i) => {
    const [status, expiresAt, revision, pindex] = rows[i] ?? [];
    if (status === 'working' && isLive(expiresAt, now)) {
      const principal = pindex?.slice(pindex.lastIndexOf(':') + 1) ?? '';
      const order = memberCreatedAt(members[i] as string);
      live.push({ id, revision: Number(revision), order, principal });
    }
  });
  return live;
}

/** Working tasks whose lease runs past now, with their holders (dead holders' first). */
export async function findLeased(
  parts: ScanParts,
  limit: number,
  now: number,
  callerLeaseNow: number | '',
): Promise<LeaseHolder[]> {
  const perBucket = await Promise.all(
    parts.keys.allBuckets.map(async (bucket) => {
      const { leaseTime, members } = await leaseRange(
        parts,
        bucket,
        'leased',
        0,
        limit,
        callerLeaseNow,
      );
      const ids = members.map(memberId);
      const rows = await readTasks(parts, ids, [
        'status',
        'expiresAt',
        'leaseOwner',
        'leaseExpiresAt',
      ]);
      const held: LeaseHolder[] = [];
      ids.forEach((id, i) => {
        const [status, expiresAt, owner, until] = rows[i] ?? [];
        if (status === 'working' && isLive(expiresAt, now) && owner && Number(until) > leaseTime)
          held.push({ id, owner });
      });
      return held;
    }),
  );
  return interleave(perBucket, limit);
}

/**
 * Deletes up to `limit` expired tasks: per bucket, the due members, then their principal index
 * and idempotency key (read from the hash), then one script per task with every key declared;
 * idempotency keys live in other slots and are freed last.
 */
export async function sweepExpired(
  parts: ScanParts,
  limit: number,
  now: number,
): Promise<string[]> {
  const { keys } = parts;
  const due = await Promise.all(
    keys.allBuckets.map((bucket) =>
      parts.redis.zrangebyscore(keys.expiry(bucket), '-inf', now, 'LIMIT', 0, limit),
    ),
  );
  const chosen = interleave(
    due.map((members, bucket) => members.map((member) => ({ member, bucket }))),
    limit,
  );
  const perBucket = await Promise.all(
    keys.allBuckets.map((bucket) =>
      sweepBucket(
        parts,
        bucket,
        chosen.filter((entry) => entry.bucket === bucket).map((entry) => entry.member),
        now,
      ),
    ),
  );
  return perBucket.flat();
}

async function sweepBucket(
  parts: ScanParts,
  bucket: number,
  members: string[],
  now: number,
): Promise<string[]> {
  if (members.length === 0) return [];
  const { keys } = parts;
  const ids = members.map(memberId);
  const reads = parts.redis.pipeline();
  for (const id of ids) reads.hmget(keys.task(id), 'pindex', 'idem');
  const found = ((await reads.exec()) ?? []).map((reply) => (reply[1] ?? []) as Hmget);
  const deletes = parts.redis.pipeline();
  members.forEach((member, i) => {
    const id = ids[i] as string;
    const pindex = found[i]?.[0];
    const taskKeys = [keys.task(id), keys.steps(id), ...keys.texts(id)];
    taskKeys.push(keys.expiry(bucket), keys.created(bucket));
    taskKeys.push(keys.working(bucket), ...(pindex ? [pindex] : []));
    callScript(deletes, 'sweep-task', taskKeys, [member, now, parts.channel, parts.origin, id]);
  });
  const replies = (await deletes.exec()) ?? [];
  const deleted: string[] = [];
  const forgets: Promise<void>[] = [];
  replies.forEach(([error, value], i) => {
    if (error) throw error;
    if (value !== 1) return;
    const id = ids[i] as string;
    deleted.push(id);
    const idem = found[i]?.[1];
    if (idem) forgets.push(forgetIdempotencyKey(parts, idem, id));
  });
  await Promise.all(forgets);
  return deleted;
}
