import { TaskEvents } from '../../store/events.js';
import type {
  ClaimOptions,
  CompareAndSetOutcome,
  CreateOptions,
  CreateOutcome,
  LeaseGrant,
  LeaseHolder,
  RunnableTask,
  LeaseRenewal,
  ListPage,
  LeaseDurability,
  ListQuery,
  ReleaseOptions,
  SaveStepOutcome,
  TaskStore,
  WriteFence,
  PermitOutcome,
  PermitRequest,
} from '../../store/port.js';
import { TaskrailError } from '../../task/errors.js';
import { newToken } from '../../task/ids.js';
import { isExpired, type TaskRecord } from '../../task/record.js';
import { isTaskStatus, type TaskStatus } from '../../task/status.js';
import type { Clock } from '../../task/time.js';
import {
  assertDelayMs,
  assertLeaseMs,
  assertNextRevision,
  capOf,
  queueFullError,
  storeClosedError,
} from '../shared/checks.js';
import { decodeRecord, encodeData, encodeRecord, writeNotice } from './codec.js';
import { createScriptCall } from './create-call.js';
import { quitWithin } from './connect.js';
import { RedisKeys } from './keys.js';
import { classifyFailures } from './errors.js';
import { forgetIdempotencyKey, reserveIdempotencyKey } from './idempotency.js';
import { listTasks } from './list.js';
import { countUnfinished } from './count.js';
import { RedisPermits } from './permits.js';
import { ClusterPermits } from './cluster-permits.js';
import { grantWithPermit, wakeAfterWrite } from '../shared/permits.js';
import { findLeased, findRunnable, sweepExpired, type ScanParts } from './scans.js';
import { ReplicaAcks } from './replica-acks.js';
import { callScript, RedisScripts, type RedisClient } from './scripts.js';
import { RedisTexts } from './texts.js';

export interface RedisStoreParts {
  redis: RedisClient;
  subscriber: RedisClient;
  prefix: string;
  /** 1 on a single Redis; on a Cluster, how many slots the tasks spread over (see keys.ts). */
  buckets: number;
  description: string;
  clock: Clock;
  /** This instance's id on the events channel. */
  origin: string;
  /** Redis deletes a task key this long after its expiresAt; the sweeper normally comes first. */
  expiryGraceMs: number;
  /**
   * Whose clock judges leases: Redis's (`TIME` inside the scripts, the default), so processes
   * with skewed clocks agree; or the caller's `clock` (tests with a fake clock).
   */
  leaseClock?: 'redis' | 'caller';
  /** Where a create the replicas did not confirm is reported. Default: `process.emitWarning`. */
  warn?: (message: string) => void;
}

/** How long a create waits for the replicas of a Cluster slot before it answers anyway. */
const CREATE_CONFIRM_MS = 5_000;
/** How long a `retry: false` run waits for its claim to reach the replicas before handing back. */
const LEASE_CONFIRM_MS = 10_000;

type Reply = Array<string | number | null>;
/** The reply code of a fenced write the scripts refused (compare-and-set, save-step). */
const FENCED = 2;
/** The claim script's reply: lease expiry, interrupted, and when loading fixed, data, steps. */
type ClaimReply = [number, number, string?, string?, string[]?];

/** HGETALL's flat `name, value JSON, …` reply as the steps object `loadSteps` returns. */
function decodeSteps(flat: readonly string[] = []): Record<string, unknown> {
  const steps: Record<string, unknown> = {};
  for (let i = 0; i + 1 < flat.length; i += 2)
    steps[flat[i] as string] = JSON.parse(flat[i + 1] as string);
  return steps;
}

/** A `TaskStore` on Redis: one Lua script per state change; see keys.ts for the layout. */
export class RedisTaskStore implements TaskStore {
  readonly description: string;
  readonly events = new TaskEvents();
  readonly #redis: RedisClient;
  readonly #subscriber: RedisClient;
  readonly #scripts: RedisScripts;
  readonly #keys: RedisKeys;
  readonly #permits: RedisPermits | ClusterPermits;
  /** On a Cluster, the permits that follow this store's lease writes; none on a single Redis. */
  readonly #clusterPermits: ClusterPermits | undefined;
  readonly #clock: Clock;
  readonly #origin: string;
  readonly #graceMs: number;
  readonly #leaseClock: 'redis' | 'caller';
  readonly #acks: ReplicaAcks;
  readonly #warn: (message: string) => void;
  readonly #texts: RedisTexts;
  #closed = false;

  constructor(parts: RedisStoreParts) {
    this.#redis = parts.redis;
    this.#subscriber = parts.subscriber;
    this.#scripts = new RedisScripts(parts.redis);
    this.#keys = new RedisKeys(parts.prefix, parts.buckets);
    const clocks = { now: () => this.#clock(), leaseNow: () => this.#callerLeaseNow() };
    const permitParts = { ...parts, scripts: this.#scripts, ...clocks };
    this.#clusterPermits = parts.buckets === 1 ? undefined : new ClusterPermits(permitParts);
    this.#permits = this.#clusterPermits ?? new RedisPermits(permitParts);
    this.#clock = parts.clock;
    this.#origin = parts.origin;
    this.#graceMs = parts.expiryGraceMs;
    this.#leaseClock = parts.leaseClock ?? 'redis';
    this.#acks = new ReplicaAcks(parts.redis);
    this.#warn = parts.warn ?? ((message) => process.emitWarning(`taskrail: ${message}`));
    this.description = parts.description;
    const notices = { events: this.events, origin: parts.origin };
    this.#texts = new RedisTexts(this.#scripts, this.#keys, parts.clock, notices);
  }

  async create(task: TaskRecord, options: CreateOptions = {}): Promise<CreateOutcome> {
    this.#assertOpen();
    const lease = options.lease;
    if (lease !== undefined) assertLeaseMs(lease.leaseMs);
    const token = lease === undefined ? '' : newToken();
    const keys = this.#keys;
    const encoded = encodeRecord(task);
    const redisExpiryMs = this.#redisExpiryMs(task.expiresAt);
    const idem =
      task.idempotencyKey === undefined
        ? ''
        : keys.idempotency(task.principal, task.idempotencyKey);
    if (idem !== '') {
      const parts = { redis: this.#redis, scripts: this.#scripts, keys };
      const found = await reserveIdempotencyKey(parts, idem, task, redisExpiryMs, this.#clock());
      if (!found.reserved) return { task: found.earlier, created: false };
    }
    const cap = capOf(task, options.maxUnfinished);
    // One bucket: the create script counts and refuses. Several (a Cluster): counted before.
    const counted = keys.buckets > 1 ? await this.#countBefore(task, cap, idem) : undefined;
    const bucket = keys.bucketOf(task.id);
    const { keys: createKeys, args: createArgs } = createScriptCall(keys, task, encoded, {
      redisExpiryMs,
      idempotencyKey: idem,
      origin: this.#origin,
      lease:
        lease === undefined ? undefined : { owner: lease.owner, token, leaseMs: lease.leaseMs },
      callerNow: this.#callerLeaseNow(),
      now: this.#clock(),
      maxUnfinished: keys.buckets === 1 ? (cap ?? '') : '',
    });
    const reply = this.#acks.needed
      ? await this.#createOnReplicas(task, bucket, createKeys, createArgs)
      : ((await this.#scripts.run('create', createKeys, createArgs)) as Reply);
    if (reply[0] === -1 || reply[0] === -2) {
      if (idem !== '') await forgetIdempotencyKey({ scripts: this.#scripts }, idem, task.id);
      if (reply[0] === -2) throw queueFullError(task, cap as number);
      throw new TaskrailError('CONFLICT', `task ${task.id} already exists`);
    }
    const stored = decodeRecord(encoded.fixed, encoded.data);
    if (this.events.listenerCount('task:created') > 0) {
      this.events.emit('task:created', { task: decodeRecord(encoded.fixed, encoded.data) });
    }
    const leaseUntil = Number(reply[1] ?? 0);
    const outcome: CreateOutcome = { task: stored, created: true };
    if (cap !== undefined) outcome.position = counted ?? Number(reply[2]);
    if (leaseUntil <= 0) return outcome;
    const grant = { token, expiresAt: leaseUntil, interrupted: false };
    const timing = { id: task.id, createdAt: () => task.createdAt };
    outcome.lease = await grantWithPermit(this.#permits, grant, lease?.permit, timing);
    return outcome;
  }

  /**
   * On a Cluster, a principal's unfinished tasks spread over every bucket's slot: they are
   * counted before the create (creates racing at the cap can pass it by one each). The new
   * task's place, or undefined without a cap; past the cap, the reserved key is given back.
   */
  async #countBefore(task: TaskRecord, cap: number | undefined, idem: string) {
    if (cap === undefined) return undefined;
    const unfinished = await this.countUnfinished(task.principal, cap);
    if (unfinished < cap) return unfinished + 1;
    if (idem !== '') await forgetIdempotencyKey({ scripts: this.#scripts }, idem, task.id);
    throw queueFullError(task, cap);
  }

  /**
   * On a Cluster, the create goes out pipelined with WAIT: the reply waits until every replica
   * of the slot has the task, so a failover cannot lose a task a client was told about.
   */
  async #createOnReplicas(
    task: TaskRecord,
    bucket: number,
    keys: string[],
    args: Array<string | number>,
  ): Promise<Reply> {
    const { written, durability } = await this.#acks.write(
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
      this.#warn(
        `task ${task.id} is stored on its Redis Cluster master, but its replicas did not ` +
          `confirm it within ${CREATE_CONFIRM_MS} ms (time its master spent not answering ` +
          `not counted): a failover now could lose it`,
      );
    }
    return written as Reply;
  }

  /**
   * Whether the lease `token` is on every replica of the task's slot (a Cluster; elsewhere
   * nothing can promote a replica that lacks it, so: durable, at no cost). A `retry: false`
   * run asks before its tool starts: a claim a failover loses would make the next claim look
   * like a first run.
   */
  async confirmLease(id: string, token: string): Promise<LeaseDurability> {
    this.#assertOpen();
    if (!this.#acks.needed) return 'durable';
    const check = { key: this.#keys.task(id), field: 'leaseToken', value: token };
    return this.#acks.confirm(this.#keys.bucketOf(id), check, LEASE_CONFIRM_MS);
  }

  async get(id: string): Promise<TaskRecord | undefined> {
    this.#assertOpen();
    const [fixed, data] = await this.#redis.hmget(this.#keys.task(id), 'fixed', 'data');
    if (fixed === null || data === null) return undefined;
    const task = decodeRecord(fixed, data);
    return isExpired(task, this.#clock()) ? undefined : task;
  }

  async compareAndSet(
    next: TaskRecord,
    expectedRevision: number,
    fence?: WriteFence,
  ): Promise<CompareAndSetOutcome> {
    this.#assertOpen();
    assertNextRevision(next, expectedRevision);
    const data = encodeData(next);
    const bucket = this.#keys.bucketOf(next.id);
    const reply = (await this.#scripts.run(
      'compare-and-set',
      [
        this.#keys.task(next.id),
        this.#keys.working(bucket),
        this.#keys.expiry(bucket),
        this.#keys.unfinished(bucket, next.principal),
      ],
      [
        expectedRevision,
        data,
        next.status,
        next.expiresAt ?? '',
        this.#redisExpiryMs(next.expiresAt),
        this.#clock(),
        this.#keys.channel,
        this.#origin,
        writeNotice(next),
        fence?.leaseToken ?? '',
      ],
    )) as Reply;
    if (reply[0] === FENCED)
      return { ok: false, fenced: true, current: decodeRecord(reply[1], reply[2]) };
    if (reply[0] === 0) {
      return {
        ok: false,
        current: reply.length > 1 ? decodeRecord(reply[1], reply[2]) : undefined,
      };
    }
    // The stored fixed part with the data just written (encoded once, above).
    const written = decodeRecord(reply[1], data);
    const previous = reply[2] as TaskStatus;
    if (written.status !== 'working') await this.#clusterPermits?.leaseEnded(next.id);
    if (this.#listened(next.id, previous, written.status)) {
      this.events.emitWrite(decodeRecord(reply[1], data), previous);
    }
    const wake = await wakeAfterWrite(this.#permits, fence, written);
    return wake === undefined ? { ok: true, task: written } : { ok: true, task: written, wake };
  }

  async claim(
    id: string,
    owner: string,
    leaseMs: number,
    options: ClaimOptions = {},
  ): Promise<LeaseGrant | undefined> {
    this.#assertOpen();
    assertLeaseMs(leaseMs);
    const token = newToken();
    const load = options.load === true;
    const reply = (await this.#scripts.run(
      'claim',
      [...this.#leaseKeys(id), this.#keys.steps(id)],
      [
        owner,
        token,
        Math.ceil(leaseMs),
        this.#clock(),
        options.takeOverFrom ?? '',
        this.#callerLeaseNow(),
        load ? '1' : '0',
      ],
    )) as ClaimReply | null;
    if (reply === null) return undefined;
    const claimed = { token, expiresAt: Number(reply[0]), interrupted: reply[1] === 1 };
    const [, , fixed, data, steps] = reply;
    const task = load ? decodeRecord(fixed, data) : undefined;
    const createdAt = async () => (task ?? (await this.get(id)))?.createdAt ?? 0;
    const grant = await grantWithPermit(this.#permits, claimed, options.permit, { id, createdAt });
    if (task === undefined) return grant;
    return { ...grant, loaded: { task, steps: decodeSteps(steps) } };
  }

  async renewLease(id: string, token: string, leaseMs: number): Promise<LeaseRenewal> {
    this.#assertOpen();
    assertLeaseMs(leaseMs);
    const reply = (await this.#scripts.run('renew-lease', this.#leaseKeys(id), [
      token,
      Math.ceil(leaseMs),
      this.#clock(),
      this.#callerLeaseNow(),
    ])) as Reply;
    const status = isTaskStatus(reply[1]) ? reply[1] : undefined;
    const held = reply[0] === 1;
    if (held) await this.#clusterPermits?.leaseRenewed(id, token, leaseMs);
    return { held, status };
  }

  async releaseLease(id: string, token: string, options: ReleaseOptions = {}): Promise<void> {
    this.#assertOpen();
    const released = await this.#scripts.run('release-lease', this.#leaseKeys(id), [
      token,
      options.abandoned === true ? '1' : '0',
      this.#callerLeaseNow(),
    ]);
    if (released === 1) await this.#clusterPermits?.leaseEnded(id, token);
  }

  async releaseUntil(id: string, token: string, delayMs: number): Promise<number | undefined> {
    this.#assertOpen();
    assertDelayMs(delayMs);
    const wakeAt = await this.#scripts.run('release-until', this.#leaseKeys(id), [
      token,
      Math.ceil(delayMs),
      this.#clock(),
      this.#callerLeaseNow(),
    ]);
    if (typeof wakeAt !== 'number') return undefined;
    await this.#clusterPermits?.leaseEnded(id, token);
    return wakeAt;
  }

  async acquirePermit(request: PermitRequest): Promise<PermitOutcome> {
    this.#assertOpen();
    return this.#permits.acquire(request);
  }

  async releasePermit(
    key: string,
    limit: number,
    taskId: string,
    token: string,
  ): Promise<string[]> {
    this.#assertOpen();
    return this.#permits.release(key, limit, taskId, token);
  }

  async findRunnable(limit: number): Promise<string[]> {
    return (await this.findRunnableTasks(limit)).map((task) => task.id);
  }

  async findRunnableTasks(limit: number): Promise<RunnableTask[]> {
    this.#assertOpen();
    if (limit <= 0) return [];
    return findRunnable(this.#scanParts(), limit, this.#clock(), this.#callerLeaseNow());
  }

  async countUnfinished(principal: string, atMost: number): Promise<number> {
    this.#assertOpen();
    if (atMost <= 0) return 0;
    return countUnfinished(this.#scanParts(), principal, atMost, this.#clock());
  }

  async findLeased(limit: number): Promise<LeaseHolder[]> {
    this.#assertOpen();
    if (limit <= 0) return [];
    return findLeased(this.#scanParts(), limit, this.#clock(), this.#callerLeaseNow());
  }

  async saveStep(
    id: string,
    name: string,
    value: unknown,
    fence?: WriteFence,
  ): Promise<SaveStepOutcome> {
    this.#assertOpen();
    const saved = await this.#scripts.run(
      'save-step',
      [this.#keys.task(id), this.#keys.steps(id)],
      [name, JSON.stringify(value ?? null), this.#clock(), fence?.leaseToken ?? ''],
    );
    if (saved === FENCED) return { ok: false, fenced: true };
    if (saved !== 1) throw new TaskrailError('TASK_NOT_FOUND', `task ${id} not found`);
    return { ok: true };
  }

  async loadSteps(id: string): Promise<Record<string, unknown>> {
    this.#assertOpen();
    const steps: Record<string, unknown> = {};
    // One round trip, and no decoding of the record only to learn whether it is live.
    const replies = await this.#redis
      .pipeline()
      .hget(this.#keys.task(id), 'expiresAt')
      .hgetall(this.#keys.steps(id))
      .exec();
    const [[expiryError, expiresAt] = [], [stepsError, stored] = []] = replies ?? [];
    if (expiryError) throw expiryError;
    if (stepsError) throw stepsError;
    if (typeof expiresAt !== 'string') return steps;
    if (expiresAt !== '' && Number(expiresAt) <= this.#clock()) return steps;
    for (const [name, json] of Object.entries(stored as Record<string, string>)) {
      steps[name] = JSON.parse(json);
    }
    return steps;
  }

  // Properties, typed by the port: the store's file stays short (texts.ts does the work).
  appendText: TaskStore['appendText'] = async (id, kind, chunk, options = {}) => {
    this.#assertOpen();
    return this.#texts.append(id, kind, chunk, options.fence?.leaseToken ?? '', options.maxChars);
  };

  readText: TaskStore['readText'] = async (id, kind, offset, length) => {
    this.#assertOpen();
    return this.#texts.read(id, kind, offset, length);
  };

  async list(query: ListQuery): Promise<ListPage> {
    this.#assertOpen();
    return listTasks(this.#redis, this.#keys, query, this.#clock());
  }

  async sweepExpired(limit: number): Promise<string[]> {
    this.#assertOpen();
    if (limit <= 0) return [];
    const ids = await sweepExpired(this.#scanParts(), Math.floor(limit), this.#clock());
    for (const id of ids) this.events.emit('task:deleted', { id });
    return ids;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all([quitWithin(this.#subscriber), quitWithin(this.#redis)]);
  }

  /** Relative, so a test's fake clock cannot make Redis delete a key at once. */
  #redisExpiryMs(expiresAt: number | null): number | '' {
    if (expiresAt === null) return '';
    return Math.max(1, Math.ceil(expiresAt - this.#clock() + this.#graceMs));
  }

  #leaseKeys(id: string): string[] {
    return [this.#keys.task(id), this.#keys.working(this.#keys.bucketOf(id))];
  }

  #scanParts(): ScanParts {
    const parts = { redis: this.#redis, scripts: this.#scripts, keys: this.#keys };
    return { ...parts, channel: this.#keys.channel, origin: this.#origin };
  }

  /** The caller's time for lease scripts, or '' for Redis's own clock (the default). */
  #callerLeaseNow(): number | '' {
    return this.#leaseClock === 'caller' ? this.#clock() : '';
  }

  #assertOpen(): void {
    if (this.#closed) throw storeClosedError(this.description);
  }

  /** Decoding a second copy of the record for listeners is skipped when nobody listens. */
  #listened(id: string, from: TaskStatus, to: TaskStatus): boolean {
    return (
      this.events.wants('task:updated', id) ||
      (from !== to && this.events.wants('task:transition', id))
    );
  }
}

classifyFailures(RedisTaskStore.prototype, [
  'create',
  'get',
  'compareAndSet',
  'claim',
  'confirmLease',
  'renewLease',
  'releaseLease',
  'releaseUntil',
  'acquirePermit',
  'releasePermit',
  'findRunnable',
  'findRunnableTasks',
  'findLeased',
  'countUnfinished',
  'saveStep',
  'loadSteps',
  'list',
  'sweepExpired',
]);
