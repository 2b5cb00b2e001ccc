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
import { isExpired, type TaskRecord } from '../../task/record.js';
import type { TaskStatus } from '../../task/status.js';
import type { Clock } from '../../task/time.js';
import { assertNextRevision, storeClosedError } from '../shared/checks.js';
import { decodeRecord, encodeData, writeNotice } from './codec.js';
import { createTask, type RedisCreateParts } from './create-task.js';
import { quitWithin } from './connect.js';
import { RedisKeys } from './keys.js';
import { classifyFailures } from './errors.js';
import { RedisLeases } from './leases.js';
import { listTasks } from './list.js';
import { countUnfinished } from './count.js';
import { RedisPermits } from './permits.js';
import { ClusterPermits } from './cluster-permits.js';
import { wakeAfterWrite } from '../shared/permits.js';
import { findLeased, findRunnable, sweepExpired, type ScanParts } from './scans.js';
import { ReplicaAcks } from './replica-acks.js';
import { RedisScripts, type RedisClient } from './scripts.js';
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

type Reply = Array<string | number | null>;
/** The reply code of a fenced write the scripts refused (compare-and-set, save-step). */
const FENCED = 2;

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
  readonly #texts: RedisTexts;
  readonly #leases: RedisLeases;
  readonly #createParts: RedisCreateParts;
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
    this.description = parts.description;
    const notices = { events: this.events, origin: parts.origin };
    this.#texts = new RedisTexts(this.#scripts, this.#keys, parts.clock, notices);
    const shared = this.#sharedParts(parts.redis);
    const leaseParts = { ...shared, clusterPermits: this.#clusterPermits };
    this.#leases = new RedisLeases({ ...leaseParts, get: (id) => this.get(id) });
    this.#createParts = {
      ...shared,
      events: this.events,
      origin: parts.origin,
      redisExpiryMs: (expiresAt) => this.#redisExpiryMs(expiresAt),
      countUnfinished: (principal, atMost) => this.countUnfinished(principal, atMost),
      warn: parts.warn ?? ((message) => process.emitWarning(`taskrail: ${message}`)),
    };
  }

  async create(task: TaskRecord, options: CreateOptions = {}): Promise<CreateOutcome> {
    this.#assertOpen();
    return createTask(this.#createParts, task, options);
  }

  async confirmLease(id: string, token: string): Promise<LeaseDurability> {
    this.#assertOpen();
    return this.#leases.confirm(id, token);
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
    // The fenced release first: it names the waiters and forgets the permit, so the lease's end
    // only releases a permit no fence named (one release script run either way, not two).
    const wake = await wakeAfterWrite(this.#permits, fence, written);
    if (written.status !== 'working') await this.#clusterPermits?.leaseEnded(next.id);
    if (this.#listened(next.id, previous, written.status)) {
      this.events.emitWrite(decodeRecord(reply[1], data), previous);
    }
    return wake === undefined ? { ok: true, task: written } : { ok: true, task: written, wake };
  }

  async claim(
    id: string,
    owner: string,
    leaseMs: number,
    options: ClaimOptions = {},
  ): Promise<LeaseGrant | undefined> {
    this.#assertOpen();
    return this.#leases.claim(id, owner, leaseMs, options);
  }

  async renewLease(id: string, token: string, leaseMs: number): Promise<LeaseRenewal> {
    this.#assertOpen();
    return this.#leases.renew(id, token, leaseMs);
  }

  async releaseLease(id: string, token: string, options: ReleaseOptions = {}): Promise<void> {
    this.#assertOpen();
    return this.#leases.release(id, token, options);
  }

  async releaseUntil(id: string, token: string, delayMs: number): Promise<number | undefined> {
    this.#assertOpen();
    return this.#leases.releaseUntil(id, token, delayMs);
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

  /** What the lease methods and the create path (leases.ts, create-task.ts) both use. */
  #sharedParts(redis: RedisClient) {
    return {
      redis,
      scripts: this.#scripts,
      keys: this.#keys,
      acks: new ReplicaAcks(redis),
      permits: this.#permits,
      clock: this.#clock,
      callerLeaseNow: () => this.#callerLeaseNow(),
    };
  }

  /** Relative, so a test's fake clock cannot make Redis delete a key at once. */
  #redisExpiryMs(expiresAt: number | null): number | '' {
    if (expiresAt === null) return '';
    return Math.max(1, Math.ceil(expiresAt - this.#clock() + this.#graceMs));
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
