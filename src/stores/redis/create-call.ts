import type { TaskRecord } from '../../task/record.js';
import { createdNotice, type EncodedRecord } from './codec.js';
import { indexMember, type RedisKeys } from './keys.js';

export interface CreateCallOptions {
  /** Milliseconds Redis keeps the task key (its expiry plus grace), or '' for none. */
  redisExpiryMs: number | '';
  /** The idempotency key's Redis key, or ''. */
  idempotencyKey: string;
  /** This store instance's id on the events channel. */
  origin: string;
  /** A lease taken in the creating write. */
  lease: { owner: string; token: string; leaseMs: number } | undefined;
  /** The caller's clock when it judges leases (tests), else ''. */
  callerNow: number | '';
  /** The store's clock, for the expiry of the principal's unfinished tasks. */
  now: number;
  /** The most unfinished tasks the principal may have in the task's bucket, or '' for no cap. */
  maxUnfinished: number | '';
}

/** The keys and arguments of the `create` script (lua/create.lua) for one task. */
export function createScriptCall(
  keys: RedisKeys,
  task: TaskRecord,
  encoded: EncodedRecord,
  options: CreateCallOptions,
): { keys: string[]; args: Array<string | number> } {
  const bucket = keys.bucketOf(task.id);
  const { lease } = options;
  return {
    keys: [
      keys.task(task.id),
      keys.created(bucket),
      keys.principal(bucket, task.principal),
      keys.working(bucket),
      keys.expiry(bucket),
      keys.unfinished(bucket, task.principal),
    ],
    args: [
      encoded.fixed,
      encoded.data,
      task.status,
      task.revision,
      indexMember(task.createdAt, task.id),
      task.expiresAt ?? '',
      options.redisExpiryMs,
      options.idempotencyKey,
      keys.channel,
      options.origin,
      lease?.owner ?? '',
      lease?.token ?? '',
      lease === undefined ? 0 : Math.ceil(lease.leaseMs),
      options.callerNow,
      createdNotice(task),
      options.maxUnfinished,
      options.now,
    ],
  };
}
