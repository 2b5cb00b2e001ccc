import { roundRobinByPrincipal } from '../shared/round-robin.js';
import type {
  AppendTextOptions,
  AppendTextOutcome,
  ClaimOptions,
  CompareAndSetOutcome,
  CreateOptions,
  CreateOutcome,
  LeaseGrant,
  LeaseHolder,
  LeaseRenewal,
  ListPage,
  ListQuery,
  PermitAsk,
  PermitOutcome,
  PermitRequest,
  ReleaseOptions,
  SaveStepOutcome,
  StoredText,
  TaskStore,
  TaskTextKind,
  WriteFence,
} from '../../store/port.js';
import { TaskEvents } from '../../store/events.js';
import { TaskrailError } from '../../task/errors.js';
import { newToken } from '../../task/ids.js';
import { fixedFieldsOf, isExpired, type TaskRecord } from '../../task/record.js';
import { isTerminal } from '../../task/status.js';
import { systemClock, type Clock } from '../../task/time.js';
import {
  assertDelayMs,
  assertLeaseMs,
  assertNextRevision,
  fenceRefuses,
  storeClosedError,
  capOf,
  queueFullError,
} from '../shared/checks.js';
import {
  clampListLimit,
  decodeListCursor,
  encodeListCursor,
  isAfterPosition,
} from '../shared/list-cursor.js';
import { MemoryPermits } from './permits.js';
import { MemoryTexts } from './memory-texts.js';

export interface MemoryTaskStoreOptions {
  clock?: Clock;
}

interface Lease {
  owner: string;
  /** '' for a `releaseUntil` wait: nobody holds it, and the claim after it is no interruption. */
  token: string;
  expiresAt: number;
}

/** Values go through JSON on the way in and out, as they would in any real database. */
function jsonCopy<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/** `next` with the fields fixed at creation taken from `stored`: a write cannot change them. */
function withFixedFields(next: TaskRecord, stored: TaskRecord): TaskRecord {
  const { idempotencyKey: _ignored, ...rest } = next;
  return { ...rest, ...fixedFieldsOf(stored) };
}

function idempotencySlot(principal: string, key: string): string {
  return `${principal}\u0000${key}`;
}

/**
 * A `TaskStore` in process memory, for tests and demos: everything is lost when the process
 * exits. Every operation runs to completion synchronously inside its promise, so operations
 * are atomic with respect to each other.
 */
export class MemoryTaskStore implements TaskStore {
  readonly description = 'memory task store';
  readonly events = new TaskEvents();
  readonly #clock: Clock;
  readonly #tasks = new Map<string, TaskRecord>();
  readonly #idempotency = new Map<string, string>();
  readonly #leases = new Map<string, Lease>();
  readonly #steps = new Map<string, Map<string, string>>();
  readonly #permits = new MemoryPermits({
    leaseLive: (id, token) => {
      const lease = this.#leases.get(id);
      return token !== '' && lease?.token === token && lease.expiresAt > this.#clock();
    },
    working: (id) => this.#visible(id)?.status === 'working',
    dropLease: (id) => this.#leases.delete(id),
  });
  readonly #texts = new MemoryTexts();
  #closed = false;

  constructor(options: MemoryTaskStoreOptions = {}) {
    this.#clock = options.clock ?? systemClock;
  }

  async create(task: TaskRecord, options: CreateOptions = {}): Promise<CreateOutcome> {
    this.#assertOpen();
    if (options.lease !== undefined) assertLeaseMs(options.lease.leaseMs);
    if (task.idempotencyKey !== undefined) {
      const slot = idempotencySlot(task.principal, task.idempotencyKey);
      const earlier = this.#visible(this.#idempotency.get(slot));
      if (earlier !== undefined) return { task: jsonCopy(earlier), created: false };
      const stale = this.#idempotency.get(slot);
      if (stale !== undefined) {
        this.#delete(stale);
        this.events.emit('task:deleted', { id: stale });
      }
    }
    if (this.#tasks.has(task.id)) {
      throw new TaskrailError('CONFLICT', `task ${task.id} already exists`);
    }
    const position = this.#place(task, options.maxUnfinished);
    const stored = jsonCopy(task);
    this.#tasks.set(task.id, stored);
    if (task.idempotencyKey !== undefined) {
      this.#idempotency.set(idempotencySlot(task.principal, task.idempotencyKey), task.id);
    }
    const lease = options.lease === undefined ? undefined : this.#leaseNew(stored, options.lease);
    this.events.emit('task:created', { task: jsonCopy(stored) });
    return {
      task: jsonCopy(stored),
      created: true,
      ...(lease === undefined ? {} : { lease }),
      ...(position === undefined ? {} : { position }),
    };
  }

  /** The new task's place among its principal's unfinished, refused past the cap. */
  #place(task: TaskRecord, maxUnfinished: number | undefined): number | undefined {
    const cap = capOf(task, maxUnfinished);
    if (cap === undefined) return undefined;
    const unfinished = this.#countUnfinished(task.principal, cap);
    if (unfinished >= cap) throw queueFullError(task, cap);
    return unfinished + 1;
  }

  #leaseNew(
    task: TaskRecord,
    { owner, leaseMs, permit }: NonNullable<CreateOptions['lease']>,
  ): LeaseGrant | undefined {
    if (task.status !== 'working') return undefined;
    const lease = { owner, token: newToken(), expiresAt: this.#clock() + leaseMs };
    this.#leases.set(task.id, lease);
    const grant = { token: lease.token, expiresAt: lease.expiresAt, interrupted: false };
    return this.#withPermit(grant, task, permit);
  }

  /** The grant, with the permit asked for under it (`PermitAsk`). */
  #withPermit(grant: LeaseGrant, task: TaskRecord, ask: PermitAsk | undefined): LeaseGrant {
    if (ask === undefined) return grant;
    const request = { ...ask, taskId: task.id, token: grant.token, createdAt: task.createdAt };
    return { ...grant, permit: this.#permits.acquire(request) };
  }

  async get(id: string): Promise<TaskRecord | undefined> {
    this.#assertOpen();
    return jsonCopy(this.#visible(id));
  }

  async compareAndSet(
    next: TaskRecord,
    expectedRevision: number,
    fence?: WriteFence,
  ): Promise<CompareAndSetOutcome> {
    this.#assertOpen();
    assertNextRevision(next, expectedRevision);
    const stored = this.#visible(next.id);
    if (stored === undefined || isTerminal(stored.status)) {
      return { ok: false, current: jsonCopy(stored) };
    }
    if (fenceRefuses(fence, this.#leases.get(next.id)?.token)) {
      return { ok: false, fenced: true, current: jsonCopy(stored) };
    }
    if (stored.revision !== expectedRevision) return { ok: false, current: jsonCopy(stored) };
    const written = withFixedFields(jsonCopy(next), stored);
    this.#tasks.set(next.id, written);
    if (written.status !== 'working') this.#leases.delete(next.id);
    this.events.emitWrite(jsonCopy(written), stored.status);
    if (written.status === 'working' || fence?.permit === undefined) {
      return { ok: true, task: jsonCopy(written) };
    }
    // The lease ended, and with it the permit the fence names.
    const { key, limit } = fence.permit;
    const wake = this.#permits.release(key, limit, next.id, fence.leaseToken);
    return { ok: true, task: jsonCopy(written), wake };
  }

  async claim(
    id: string,
    owner: string,
    leaseMs: number,
    options: ClaimOptions = {},
  ): Promise<LeaseGrant | undefined> {
    this.#assertOpen();
    assertLeaseMs(leaseMs);
    const task = this.#visible(id);
    if (task === undefined || task.status !== 'working') return undefined;
    const now = this.#clock();
    const held = this.#leases.get(id);
    const live = held !== undefined && held.expiresAt > now;
    if (live && held.owner !== options.takeOverFrom) return undefined;
    const spared = options.spareExpired === true && held?.owner !== options.takeOverFrom;
    if (spared && held !== undefined && held.token !== '') return undefined;
    const lease = { owner, token: newToken(), expiresAt: now + leaseMs };
    this.#leases.set(id, lease);
    const interrupted = held !== undefined && held.token !== '';
    const grant = { token: lease.token, expiresAt: lease.expiresAt, interrupted };
    return this.#withPermit(grant, task, options.permit);
  }

  async renewLease(id: string, token: string, leaseMs: number): Promise<LeaseRenewal> {
    this.#assertOpen();
    assertLeaseMs(leaseMs);
    const status = this.#visible(id)?.status;
    const lease = this.#leases.get(id);
    if (status === undefined || lease === undefined || lease.token !== token || token === '') {
      return { held: false, status };
    }
    lease.expiresAt = this.#clock() + leaseMs;
    return { held: true, status };
  }

  async releaseLease(id: string, token: string, options: ReleaseOptions = {}): Promise<void> {
    this.#assertOpen();
    const lease = this.#leases.get(id);
    if (lease?.token !== token || token === '') return;
    // Abandoned, or released after it ran out (the run's end is not known to be clean): kept,
    // expired, so the next claim reports an interrupted run.
    const expired = lease.expiresAt <= this.#clock();
    if (options.abandoned === true || expired) this.#leases.set(id, { ...lease, expiresAt: 0 });
    else this.#leases.delete(id);
  }

  async releaseUntil(id: string, token: string, delayMs: number): Promise<number | undefined> {
    this.#assertOpen();
    assertDelayMs(delayMs);
    const lease = this.#leases.get(id);
    const now = this.#clock();
    if (lease?.token !== token || token === '' || this.#visible(id)?.status !== 'working') {
      return undefined;
    }
    // A lease that ran out proves nothing: it stays, so the next claim counts an interruption.
    if (lease.expiresAt <= now) return undefined;
    const wakeAt = now + delayMs;
    this.#leases.set(id, { owner: '', token: '', expiresAt: wakeAt });
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
    this.#assertOpen();
    const now = this.#clock();
    const runnable = [...this.#tasks.values()]
      .filter((task) => task.status === 'working' && !isExpired(task, now))
      .filter((task) => (this.#leases.get(task.id)?.expiresAt ?? -Infinity) <= now)
      .sort((a, b) => a.createdAt - b.createdAt);
    return roundRobinByPrincipal(runnable)
      .slice(0, Math.max(0, limit))
      .map((task) => task.id);
  }

  async findLeased(limit: number): Promise<LeaseHolder[]> {
    this.#assertOpen();
    const now = this.#clock();
    return [...this.#tasks.values()]
      .filter((task) => task.status === 'working' && !isExpired(task, now))
      .sort((a, b) => a.createdAt - b.createdAt)
      .flatMap((task) => {
        const lease = this.#leases.get(task.id);
        return lease !== undefined && lease.token !== '' && lease.expiresAt > now
          ? [{ id: task.id, owner: lease.owner }]
          : [];
      })
      .slice(0, Math.max(0, limit));
  }

  async saveStep(
    id: string,
    name: string,
    value: unknown,
    fence?: WriteFence,
  ): Promise<SaveStepOutcome> {
    this.#assertOpen();
    if (this.#visible(id) === undefined) {
      throw new TaskrailError('TASK_NOT_FOUND', `task ${id} not found`);
    }
    if (fenceRefuses(fence, this.#leases.get(id)?.token)) return { ok: false, fenced: true };
    let steps = this.#steps.get(id);
    if (steps === undefined) this.#steps.set(id, (steps = new Map()));
    steps.set(name, JSON.stringify(value ?? null));
    return { ok: true };
  }

  async loadSteps(id: string): Promise<Record<string, unknown>> {
    this.#assertOpen();
    const steps: Record<string, unknown> = {};
    if (this.#visible(id) === undefined) return steps;
    for (const [name, json] of this.#steps.get(id) ?? []) steps[name] = JSON.parse(json);
    return steps;
  }

  async appendText(
    id: string,
    kind: TaskTextKind,
    chunk: string,
    options: AppendTextOptions = {},
  ): Promise<AppendTextOutcome> {
    this.#assertOpen();
    if (this.#visible(id) === undefined) {
      throw new TaskrailError('TASK_NOT_FOUND', `task ${id} not found`);
    }
    if (fenceRefuses(options.fence, this.#leases.get(id)?.token))
      return { ok: false, fenced: true };
    const appended = this.#texts.append(id, kind, chunk, options);
    this.events.emit('task:text', { id, kind, end: appended.end });
    return { ok: true, ...appended };
  }

  async readText(
    id: string,
    kind: TaskTextKind,
    offset: number,
    length: number,
  ): Promise<StoredText | undefined> {
    this.#assertOpen();
    if (this.#visible(id) === undefined) return undefined;
    return this.#texts.read(id, kind, offset, length);
  }

  async list(query: ListQuery): Promise<ListPage> {
    this.#assertOpen();
    const now = this.#clock();
    const limit = clampListLimit(query.limit);
    const after = query.cursor === undefined ? undefined : decodeListCursor(query.cursor);
    const matching = [...this.#tasks.values()]
      .filter((task) => !isExpired(task, now))
      .filter((task) => query.principal === undefined || task.principal === query.principal)
      .filter((task) => query.tool === undefined || task.tool === query.tool)
      .filter((task) => query.statuses === undefined || query.statuses.includes(task.status))
      .filter((task) => after === undefined || isAfterPosition(task, after))
      .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    const tasks = matching.slice(0, limit).map((task) => jsonCopy(task));
    const last = tasks[tasks.length - 1];
    return matching.length > limit && last !== undefined
      ? { tasks, nextCursor: encodeListCursor(last) }
      : { tasks };
  }

  /** A scan of every task: the memory store is for tests and development, not for size. */
  async countUnfinished(principal: string, atMost: number): Promise<number> {
    this.#assertOpen();
    return this.#countUnfinished(principal, atMost);
  }

  #countUnfinished(principal: string, atMost: number): number {
    const now = this.#clock();
    let count = 0;
    for (const task of this.#tasks.values()) {
      if (count >= atMost) break;
      if (task.principal !== principal || isExpired(task, now)) continue;
      if (task.status === 'working' || task.status === 'input_required') count += 1;
    }
    return count;
  }

  async sweepExpired(limit: number): Promise<string[]> {
    this.#assertOpen();
    const now = this.#clock();
    const expired = [...this.#tasks.values()]
      .filter((task) => isExpired(task, now))
      .sort((a, b) => (a.expiresAt ?? 0) - (b.expiresAt ?? 0))
      .slice(0, Math.max(0, limit))
      .map((task) => task.id);
    for (const id of expired) this.#delete(id);
    for (const id of expired) this.events.emit('task:deleted', { id });
    return expired;
  }

  async close(): Promise<void> {
    this.#closed = true;
  }

  #visible(id: string | undefined): TaskRecord | undefined {
    if (id === undefined) return undefined;
    const task = this.#tasks.get(id);
    return task === undefined || isExpired(task, this.#clock()) ? undefined : task;
  }

  #delete(id: string): void {
    const task = this.#tasks.get(id);
    if (task?.idempotencyKey !== undefined) {
      const slot = idempotencySlot(task.principal, task.idempotencyKey);
      if (this.#idempotency.get(slot) === id) this.#idempotency.delete(slot);
    }
    this.#tasks.delete(id);
    this.#leases.delete(id);
    this.#steps.delete(id);
    this.#texts.delete(id);
  }

  #assertOpen(): void {
    if (this.#closed) throw storeClosedError(this.description);
  }
}
