import type { TaskEvents } from '../../store/events.js';
import type { CreateOptions, CreateOutcome } from '../../store/port.js';
import { TaskrailError } from '../../task/errors.js';
import { newToken } from '../../task/ids.js';
import type { TaskRecord } from '../../task/record.js';
import type { Clock } from '../../task/time.js';
import { assertLeaseMs, capOf, queueFullError } from '../shared/checks.js';
import { grantWithPermit, type PermitSteps } from '../shared/permits.js';
import { decodeRecord, encodeRecord } from './codec.js';
import { createScriptCall } from './create-call.js';
import { forgetIdempotencyKey, reserveIdempotencyKey } from './idempotency.js';
import type { RedisKeys } from './keys.js';
import type { ReplicaAcks } from './replica-acks.js';
import { callScript, type RedisClient, type RedisScripts } from './scripts.js';

/** How long a create waits for the replicas of a Cluster slot before it answers anyway. */
const CREATE_CONFIRM_MS = 5_000;

type Reply = Array<string | number | null>;

/** What the Redis store lends its create path. */
export interface RedisCreateParts {
  redis: RedisClient;
  scripts: RedisScripts;
  keys: RedisKeys;
  acks: ReplicaAcks;
  permits: PermitSteps;
  events: TaskEvents;
  origin: string;
  clock: Clock;
  /** The caller's time for lease scripts, or '' for Redis's own clock. */
  callerLeaseNow: () => number | '';
  /** Milliseconds Redis keeps a task key expiring at `expiresAt`, or '' for none. */
  redisExpiryMs: (expiresAt: number | null) => number | '';
  /** The store's own count (a Cluster counts before the create). */
  countUnfinished: (principal: string, atMost: number) => Promise<number>;
  warn: (message: string) => void;
}

/** The Redis store's `create`: one `create` script call, with WAIT on a Cluster's replicas. */
export async function createTask(
  parts: RedisCreateParts,
  task: TaskRecord,
  options: CreateOptions,
): Promise<CreateOutcome> {
  const lease = options.lease;
  if (lease !== undefined) assertLeaseMs(lease.leaseMs);
  const token = lease === undefined ? '' : newToken();
  const { keys, scripts } = parts;
  const encoded = encodeRecord(task);
  const redisExpiryMs = parts.redisExpiryMs(task.expiresAt);
  const idem =
    task.idempotencyKey === undefined ? '' : keys.idempotency(task.principal, task.idempotencyKey);
  if (idem !== '') {
    const found = await reserveIdempotencyKey(parts, idem, task, redisExpiryMs, parts.clock());
    if (!found.reserved) return { task: found.earlier, created: false };
  }
  const cap = capOf(task, options.maxUnfinished);
  // One bucket: the create script counts and refuses. Several (a Cluster): counted before.
  const counted = keys.buckets > 1 ? await countBefore(parts, task, cap, idem) : undefined;
  const bucket = keys.bucketOf(task.id);
  const { keys: createKeys, args: createArgs } = createScriptCall(keys, task, encoded, {
    redisExpiryMs,
    idempotencyKey: idem,
    origin: parts.origin,
    lease: lease === undefined ? undefined : { owner: lease.owner, token, leaseMs: lease.leaseMs },
    callerNow: parts.callerLeaseNow(),
    now: parts.clock(),
    maxUnfinished: keys.buckets === 1 ? (cap ?? '') : '',
  });
  const reply = parts.acks.needed
    ? await createOnReplicas(parts, task, bucket, createKeys, createArgs)
    : ((await scripts.run('create', createKeys, createArgs)) as Reply);
  if (reply[0] === -1 || reply[0] === -2) {
    if (idem !== '') await forgetIdempotencyKey({ scripts }, idem, task.id);
    if (reply[0] === -2) throw queueFullError(task, cap as number);
    throw new TaskrailError('CONFLICT', `task ${task.id} already exists`);
  }
  const stored = decodeRecord(encoded.fixed, encoded.data);
  if (parts.events.listenerCount('task:created') > 0) {
    parts.events.emit('task:created', { task: decodeRecord(encoded.fixed, encoded.data) });
  }
  const leaseUntil = Number(reply[1] ?? 0);
  const outcome: CreateOutcome = { task: stored, created: true };
  if (cap !== undefined) outcome.position = counted ?? Number(reply[2]);
  if (leaseUntil <= 0) return outcome;
  const grant = { token, expiresAt: leaseUntil, interrupted: false };
  const timing = { id: task.id, createdAt: () => task.createdAt };
  outcome.lease = await grantWithPermit(parts.permits, grant, lease?.permit, timing);
  return outcome;
}

/**
 * On a Cluster, a principal's unfinished tasks spread over every bucket's slot: they are
 * counted before the create (creates racing at the cap can pass it by one each). The new
 * task's place, or undefined without a cap; past the cap, the reserved key is given back.
 */
async function countBefore(
  parts: RedisCreateParts,
  task: TaskRecord,
  cap: number | undefined,
  idem: string,
): Promise<number | undefined> {
  if (cap === undefined) return undefined;
  const unfinished = await parts.countUnfinished(task.principal, cap);
  if (unfinished < cap) return unfinished + 1;
  if (idem !== '') await forgetIdempotencyKey({ scripts: parts.scripts }, idem, task.id);
  throw queueFullError(task, cap);
}

/**
 * On a Cluster, the create goes out pipelined with WAIT: the reply waits until every replica
 * of the slot has the task, so a failover cannot lose a task a client was told about.
 */
async function createOnReplicas(
  parts: RedisCreateParts,
  task: TaskRecord,
  bucket: number,
  keys: string[],
  args: Array<string | number>,
): Promise<Reply> {
  const { written, durability } = await parts.acks.write(
    bucket,
    (pipeline) => callScript(pipeline, 'create', keys, args),
    { key: keys[0] as string, field: 'member', value: String(args[4]) },
    { budgetMs: CREATE_CONFIRM_MS, refused: (reply) => Number((reply as Reply)[0]) < 0 },
  );
  if (written === undefined || durability === 'lost') {
    throw new TaskrailError(
      'STORE_UNAVAILABLE',
      `task ${task.id} could not be stored: its Redis Cluster slot is failing over; retry`,
    );
  }
  if (durability === 'unconfirmed') {
    parts.warn(
      `task ${task.id} is stored on its Redis Cluster master, but its replicas did not ` +
        `confirm it within ${CREATE_CONFIRM_MS} ms (time its master spent not answering ` +
        `not counted): a failover now could lose it`,
    );
  }
  return written as Reply;
}
