import type { Redis } from 'ioredis';
import { TaskEvents } from '../../store/events.js';
import type {
  ClaimOptions,
  CompareAndSetOutcome,
  CreateOptions,
  CreateOutcome,
  LeaseGrant,
  LeaseHolder,
  LeaseRenewal,
  ListPage,
  ListQuery,
  ReleaseOptions,
  TaskStore,
} from '../../store/port.js';
import { TaskrailError } from '../../task/errors.js';
import { newToken } from '../../task/ids.js';
import { isExpired, type TaskRecord } from '../../task/record.js';
import { isTaskStatus, type TaskStatus } from '../../task/status.js';
import type { Clock } from '../../task/time.js';
import { assertLeaseMs, assertNextRevision, storeClosedError } from '../shared/checks.js';
import { createdNotice, decodeRecord, encodeData, encodeRecord, writeNotice } from './codec.js';
import { indexMember, memberId, RedisKeys } from './keys.js';
import { classifyFailures } from './errors.js';
import { listTasks } from './list.js';
import { claimScript, releaseScript, renewScript } from './scripts-lease.js';
import { compareAndSetScript, createScript, saveStepScript, sweepScript } from './scripts-task.js';

export interface RedisStoreParts {
  redis: Redis;
  subscriber: Redis;
  prefix: string;
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
}

type Reply = Array<string | number | null>;

/** A `TaskStore` on Redis: one Lua script per state change; see keys.ts for the layout. */
export class RedisTaskStore implements TaskStore {
  readonly description: string;
  readonly events = new TaskEvents();
  readonly #redis: Redis;
  readonly #subscriber: Redis;
  readonly #keys: RedisKeys;
  readonly #clock: Clock;
  readonly #origin: string;
  readonly #graceMs: number;
  readonly #leaseClock: 'redis' | 'caller';
  #closed = false;

  constructor(parts: RedisStoreParts) {
    this.#redis = parts.redis;
    this.#subscriber = parts.subscriber;
    this.#keys = new RedisKeys(parts.prefix);
    this.#clock = parts.clock;
    this.#origin = parts.origin;
    this.#graceMs = parts.expiryGraceMs;
    this.#leaseClock = parts.leaseClock ?? 'redis';
    this.description = parts.description;
  }

  async create(task: TaskRecord, options: CreateOptions = {}): Promise<CreateOutcome> {
    this.#assertOpen();
    const lease = options.lease;
    if (lease !== undefined) assertLeaseMs(lease.leaseMs);
    const token = lease === undefined ? '' : newToken();
    const keys = this.#keys;
    const encoded = encodeRecord(task);
    const useIdem = task.idempotencyKey !== undefined;
    const reply = (await createScript.run(
      this.#redis,
      [
        keys.task(task.id),
        keys.idempotency(task.principal, task.idempotencyKey ?? ''),
        keys.created,
        keys.principal(task.principal),
        keys.working,
        keys.expiry,
      ],
      [
        task.id,
        encoded.fixed,
        encoded.data,
        task.status,
        task.revision,
        indexMember(task.createdAt, task.id),
        task.expiresAt ?? '',
        this.#redisExpiryMs(task.expiresAt),
        useIdem ? '1' : '0',
        this.#clock(),
        keys.base,
        keys.channel,
        this.#origin,
        lease?.owner ?? '',
        token,
        lease === undefined ? 0 : Math.ceil(lease.leaseMs),
        this.#callerLeaseNow(),
        createdNotice(task),
      ],
    )) as Reply;
    if (reply[0] === -1) throw new TaskrailError('CONFLICT', `task ${task.id} already exists`);
    if (reply[0] === 0) return { task: decodeRecord(reply[1], reply[2]), created: false };
    const stored = decodeRecord(encoded.fixed, encoded.data);
    if (this.events.listenerCount('task:created') > 0) {
      this.events.emit('task:created', { task: decodeRecord(encoded.fixed, encoded.data) });
    }
    const leaseUntil = Number(reply[1] ?? 0);
    return leaseUntil > 0
      ? { task: stored, created: true, lease: { token, expiresAt: leaseUntil, interrupted: false } }
      : { task: stored, created: true };
  }

  async get(id: string): Promise<TaskRecord | undefined> {
    this.#assertOpen();
    const [fixed, data] = await this.#redis.hmget(this.#keys.task(id), 'fixed', 'data');
    if (fixed === null || data === null) return undefined;
    const task = decodeRecord(fixed, data);
    return isExpired(task, this.#clock()) ? undefined : task;
  }

  async compareAndSet(next: TaskRecord, expectedRevision: number): Promise<CompareAndSetOutcome> {
    this.#assertOpen();
    assertNextRevision(next, expectedRevision);
    const data = encodeData(next);
    const reply = (await compareAndSetScript.run(
      this.#redis,
      [this.#keys.task(next.id), this.#keys.working, this.#keys.expiry],
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
      ],
    )) as Reply;
    if (reply[0] === 0) {
      return {
        ok: false,
        current: reply.length > 1 ? decodeRecord(reply[1], reply[2]) : undefined,
      };
    }
    // The stored fixed part with the data just written (encoded once, above).
    const written = decodeRecord(reply[1], data);
    const previous = reply[2] as TaskStatus;
    if (this.#listened(next.id, previous, written.status)) {
      this.events.emitWrite(decodeRecord(reply[1], data), previous);
    }
    return { ok: true, task: written };
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
    const reply = (await claimScript.run(
      this.#redis,
      [this.#keys.task(id), this.#keys.working],
      [
        owner,
        token,
        Math.ceil(leaseMs),
        this.#clock(),
        options.takeOverFrom ?? '',
        this.#callerLeaseNow(),
      ],
    )) as Reply | null;
    if (reply === null) return undefined;
    return { token, expiresAt: Number(reply[0]), interrupted: reply[1] === 1 };
  }

  async renewLease(id: string, token: string, leaseMs: number): Promise<LeaseRenewal> {
    this.#assertOpen();
    assertLeaseMs(leaseMs);
    const reply = (await renewScript.run(
      this.#redis,
      [this.#keys.task(id), this.#keys.working],
      [token, Math.ceil(leaseMs), this.#clock(), this.#callerLeaseNow()],
    )) as Reply;
    const status = isTaskStatus(reply[1]) ? reply[1] : undefined;
    return { held: reply[0] === 1, status };
  }

  async releaseLease(id: string, token: string, options: ReleaseOptions = {}): Promise<void> {
    this.#assertOpen();
    await releaseScript.run(
      this.#redis,
      [this.#keys.task(id), this.#keys.working],
      [token, options.abandoned === true ? '1' : '0'],
    );
  }

  async findRunnable(limit: number): Promise<string[]> {
    this.#assertOpen();
    if (limit <= 0) return [];
    const now = this.#clock();
    const leaseTime = await this.#leaseNow();
    const runnable: string[] = [];
    let offset = 0;
    const batch = Math.max(limit, 50);
    for (;;) {
      const members = await this.#redis.zrangebyscore(
        this.#keys.working,
        '-inf',
        leaseTime,
        'LIMIT',
        offset,
        batch,
      );
      const live = await this.#liveWorking(members.map(memberId), now);
      for (const id of live) if (runnable.length < limit) runnable.push(id);
      if (runnable.length >= limit || members.length < batch) return runnable;
      offset += members.length;
    }
  }

  async findLeased(limit: number): Promise<LeaseHolder[]> {
    this.#assertOpen();
    if (limit <= 0) return [];
    const now = this.#clock();
    const leaseTime = await this.#leaseNow();
    // A working task's score in P:working is its lease expiry (0 while nobody holds it), so
    // leases nobody renews (a dead holder's) come first.
    const members = await this.#redis.zrangebyscore(
      this.#keys.working,
      `(${leaseTime}`,
      '+inf',
      'LIMIT',
      0,
      limit,
    );
    const ids = members.map(memberId);
    if (ids.length === 0) return [];
    const pipeline = this.#redis.pipeline();
    for (const id of ids) {
      pipeline.hmget(this.#keys.task(id), 'status', 'expiresAt', 'leaseOwner', 'leaseExpiresAt');
    }
    const replies = (await pipeline.exec()) ?? [];
    const held: LeaseHolder[] = [];
    ids.forEach((id, i) => {
      const [status, expiresAt, owner, until] = (replies[i]?.[1] ?? []) as (string | null)[];
      const live = expiresAt === '' || Number(expiresAt) > now;
      if (status === 'working' && live && owner && Number(until) > leaseTime)
        held.push({ id, owner });
    });
    return held;
  }

  async saveStep(id: string, name: string, value: unknown): Promise<void> {
    this.#assertOpen();
    const saved = await saveStepScript.run(
      this.#redis,
      [this.#keys.task(id), this.#keys.steps(id)],
      [name, JSON.stringify(value ?? null), this.#clock()],
    );
    if (saved !== 1) throw new TaskrailError('TASK_NOT_FOUND', `task ${id} not found`);
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

  async list(query: ListQuery): Promise<ListPage> {
    this.#assertOpen();
    return listTasks(this.#redis, this.#keys, query, this.#clock());
  }

  async sweepExpired(limit: number): Promise<string[]> {
    this.#assertOpen();
    if (limit <= 0) return [];
    const keys = this.#keys;
    const ids = (await sweepScript.run(
      this.#redis,
      [keys.expiry, keys.created, keys.working],
      [this.#clock(), Math.floor(limit), keys.base, keys.channel, this.#origin],
    )) as string[];
    for (const id of ids) this.events.emit('task:deleted', { id });
    return ids;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.allSettled([this.#subscriber.quit(), this.#redis.quit()]);
  }

  /** Relative, so a test's fake clock cannot make Redis delete a key at once. */
  #redisExpiryMs(expiresAt: number | null): number | '' {
    if (expiresAt === null) return '';
    return Math.max(1, Math.ceil(expiresAt - this.#clock() + this.#graceMs));
  }

  /** Drops ids whose task expired (or vanished) from a batch of runnable candidates. */
  async #liveWorking(ids: string[], now: number): Promise<string[]> {
    if (ids.length === 0) return [];
    const pipeline = this.#redis.pipeline();
    for (const id of ids) pipeline.hmget(this.#keys.task(id), 'status', 'expiresAt');
    const replies = (await pipeline.exec()) ?? [];
    return ids.filter((_id, i) => {
      const [status, expiresAt] = (replies[i]?.[1] ?? [null, null]) as [
        string | null,
        string | null,
      ];
      if (status !== 'working' || expiresAt === null) return false;
      return expiresAt === '' || Number(expiresAt) > now;
    });
  }

  /** The caller's time for lease scripts, or '' for Redis's own clock (the default). */
  #callerLeaseNow(): number | '' {
    return this.#leaseClock === 'caller' ? this.#clock() : '';
  }

  /** Now on the clock leases are judged by. */
  async #leaseNow(): Promise<number> {
    if (this.#leaseClock === 'caller') return this.#clock();
    const [seconds, micros] = await this.#redis.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
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
  'renewLease',
  'releaseLease',
  'findRunnable',
  'findLeased',
  'saveStep',
  'loadSteps',
  'list',
  'sweepExpired',
]);
