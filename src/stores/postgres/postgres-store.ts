import { createHash } from 'node:crypto';
import type pg from 'pg';
import { TaskEvents } from '../../store/events.js';
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
  ReleaseOptions,
  SaveStepOutcome,
  StoredText,
  TaskStore,
  TaskTextKind,
  WriteFence,
  PermitOutcome,
  PermitRequest,
} from '../../store/port.js';
import { TaskrailError } from '../../task/errors.js';
import { newToken } from '../../task/ids.js';
import type { TaskRecord } from '../../task/record.js';
import { isTerminal, type TaskStatus } from '../../task/status.js';
import {
  assertDelayMs,
  assertLeaseMs,
  assertNextRevision,
  capOf,
  fenceRefuses,
  queueFullError,
  storeClosedError,
} from '../shared/checks.js';
import { clampListLimit, decodeListCursor, encodeListCursor } from '../shared/list-cursor.js';
import { grantWithPermit, wakeAfterWrite } from '../shared/permits.js';
import { decodeRecord, encodeData, encodeFixed } from './codec.js';
import { storeError, uniqueViolation } from './errors.js';
import { PostgresPermits } from './permits.js';
import { listSql, statementsFor, type Statements } from './sql.js';
import { PostgresTexts } from './texts.js';

export interface PostgresStoreParts {
  pool: pg.Pool;
  /** The quoted schema name. */
  schema: string;
  /** The NOTIFY channel of this schema. */
  channel: string;
  description: string;
  /** Tests only: a fake clock. Undefined: the database's clock decides expiry and leases. */
  clock: (() => number) | undefined;
  /** This instance's id in NOTIFY payloads, so it can skip its own. */
  origin: string;
  /** Closes what the store does not own through the pool (the LISTEN connection). */
  onClose?: () => Promise<void>;
}

type Row = Record<string, unknown>;
const KEY_RACE_RETRIES = 5;

/** A task row written: its lease's expiry, and its place among its principal's unfinished. */
interface Inserted {
  leaseUntil: number | null;
  place: number;
}

/** A `TaskStore` on PostgreSQL: one statement per state change; see migrations.ts for tables. */
export class PostgresTaskStore implements TaskStore {
  readonly description: string;
  readonly events = new TaskEvents();
  readonly #pool: pg.Pool;
  readonly #sql: Statements;
  readonly #schema: string;
  readonly #clock: (() => number) | undefined;
  readonly #origin: string;
  readonly #onClose: (() => Promise<void>) | undefined;
  /** Statement text → prepared statement name (a few dozen texts per schema at most). */
  readonly #names = new Map<string, string>();
  readonly #permits: PostgresPermits;
  readonly #texts: PostgresTexts;
  #closed = false;

  constructor(parts: PostgresStoreParts) {
    this.#pool = parts.pool;
    this.#schema = parts.schema;
    this.#sql = statementsFor(parts.schema, parts.channel);
    this.#clock = parts.clock;
    this.#origin = parts.origin;
    this.#onClose = parts.onClose;
    this.description = parts.description;
    this.#permits = new PostgresPermits(parts.pool, parts.schema, parts.description, parts.clock);
    const query = (sql: string, params: unknown[]) => this.#query(sql, params);
    const where = { ...parts, events: this.events };
    this.#texts = new PostgresTexts(where, query, () => this.#now());
  }

  async create(task: TaskRecord, options: CreateOptions = {}): Promise<CreateOutcome> {
    this.#assertOpen();
    const lease = options.lease;
    if (lease !== undefined) assertLeaseMs(lease.leaseMs);
    const token = lease === undefined || task.status !== 'working' ? undefined : newToken();
    const fixed = encodeFixed(task);
    const data = encodeData(task);
    const params = [
      ...[task.id, task.principal, task.tool, task.status, task.createdAt, task.expiresAt],
      ...[task.revision, task.idempotencyKey ?? null, token === undefined ? null : lease?.owner],
      ...[token ?? null, token === undefined ? null : Math.ceil(lease?.leaseMs ?? 0)],
      ...[fixed, data, capOf(task, options.maxUnfinished) ?? null],
    ];
    const outcome =
      task.idempotencyKey === undefined
        ? await this.#insert(task, params)
        : await this.#createWithKey(task, params);
    if (outcome === undefined) return this.#existing(task);
    const stored = decodeRecord(fixed, data);
    if (this.events.listenerCount('task:created') > 0) {
      this.events.emit('task:created', { task: decodeRecord(fixed, data) });
    }
    const created: CreateOutcome = { task: stored, created: true };
    if (capOf(task, options.maxUnfinished) !== undefined) created.position = outcome.place;
    if (token === undefined || outcome.leaseUntil === null) return created;
    const grant = { token, expiresAt: outcome.leaseUntil, interrupted: false };
    const timing = { id: stored.id, createdAt: () => stored.createdAt };
    created.lease = await grantWithPermit(this.#permits, grant, lease?.permit, timing);
    return created;
  }

  async get(id: string): Promise<TaskRecord | undefined> {
    const rows = await this.#query(this.#sql.get, [this.#now(), id]);
    const row = rows[0];
    return row === undefined ? undefined : decodeRecord(row['fixed'], row['data']);
  }

  async compareAndSet(
    next: TaskRecord,
    expectedRevision: number,
    fence?: WriteFence,
  ): Promise<CompareAndSetOutcome> {
    this.#assertOpen();
    assertNextRevision(next, expectedRevision);
    const data = encodeData(next);
    const rows = await this.#query(this.#sql.compareAndSet, [
      ...[this.#now(), this.#origin, next.id, expectedRevision, next.status, next.expiresAt],
      ...[data, fence?.leaseToken ?? null],
    ]);
    const row = rows[0];
    if (row === undefined) return this.#casLost(next.id, fence);
    const written = decodeRecord(row['fixed'], data);
    const previous = row['previous_status'] as TaskStatus;
    if (this.#listened(next.id, previous, written.status)) {
      this.events.emitWrite(decodeRecord(row['fixed'], data), previous);
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
    const rows = await this.#query(load ? this.#sql.claimLoaded : this.#sql.claim, [
      ...[this.#now(), id, owner, token, Math.ceil(leaseMs)],
      options.takeOverFrom ?? null,
      options.spareExpired === true,
    ]);
    const row = rows[0];
    if (row === undefined) return undefined;
    const claimed: LeaseGrant = {
      token,
      expiresAt: Number(row['lease_expires_at']),
      interrupted: row['lease_taken_over'] === true,
    };
    const task = load ? decodeRecord(row['fixed'], row['data']) : undefined;
    const createdAt = () => task?.createdAt ?? this.#permits.createdAt(id);
    const grant = await grantWithPermit(this.#permits, claimed, options.permit, { id, createdAt });
    if (task === undefined) return grant;
    // The driver has parsed the steps' JSON object already; null when the task has none.
    const steps = (row['steps'] ?? {}) as Record<string, unknown>;
    return { ...grant, loaded: { task, steps } };
  }

  async renewLease(id: string, token: string, leaseMs: number): Promise<LeaseRenewal> {
    this.#assertOpen();
    assertLeaseMs(leaseMs);
    const rows = await this.#query(this.#sql.renew, [this.#now(), id, token, Math.ceil(leaseMs)]);
    const row = rows[0];
    if (row === undefined) return { held: false, status: undefined };
    return { held: row['held'] === true, status: row['status'] as TaskStatus };
  }

  async releaseLease(id: string, token: string, options: ReleaseOptions = {}): Promise<void> {
    if (options.abandoned === true) await this.#query(this.#sql.abandon, [id, token]);
    else await this.#query(this.#sql.release, [this.#now(), id, token]);
  }

  async releaseUntil(id: string, token: string, delayMs: number): Promise<number | undefined> {
    this.#assertOpen();
    assertDelayMs(delayMs);
    const params = [this.#now(), id, token, Math.ceil(delayMs)];
    const row = (await this.#query(this.#sql.releaseUntil, params))[0];
    return row === undefined ? undefined : Number(row['lease_expires_at']);
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
    if (limit <= 0) return [];
    const rows = await this.#query(this.#sql.runnable, [this.#now(), Math.floor(limit)]);
    return rows.map((row) => row['id'] as string);
  }

  async countUnfinished(principal: string, atMost: number): Promise<number> {
    const params = [principal, Math.max(0, Math.floor(atMost))];
    const rows = await this.#query(this.#sql.countUnfinished, params);
    return Math.max(0, Number(rows[0]?.['n'] ?? 0));
  }

  async findLeased(limit: number): Promise<LeaseHolder[]> {
    if (limit <= 0) return [];
    const rows = await this.#query(this.#sql.leased, [this.#now(), Math.floor(limit)]);
    return rows.map((row) => ({ id: row['id'] as string, owner: row['owner'] as string }));
  }

  async saveStep(
    id: string,
    name: string,
    value: unknown,
    fence?: WriteFence,
  ): Promise<SaveStepOutcome> {
    const json = JSON.stringify(value ?? null);
    let saved: Row[];
    try {
      const token = fence?.leaseToken ?? null;
      saved = await this.#query(this.#sql.saveStep, [this.#now(), id, name, json, token]);
    } catch (error) {
      // The task was swept between the check and the insert.
      if ((error as { code?: unknown }).code !== '23503') throw error;
      saved = [];
    }
    const row = saved[0];
    if (row === undefined) throw new TaskrailError('TASK_NOT_FOUND', `task ${id} not found`);
    return row['saved'] === true ? { ok: true } : { ok: false, fenced: true };
  }

  async loadSteps(id: string): Promise<Record<string, unknown>> {
    const steps: Record<string, unknown> = {};
    for (const row of await this.#query(this.#sql.loadSteps, [this.#now(), id])) {
      steps[row['name'] as string] = JSON.parse(row['value'] as string);
    }
    return steps;
  }

  async appendText(
    id: string,
    kind: TaskTextKind,
    chunk: string,
    options: AppendTextOptions = {},
  ): Promise<AppendTextOutcome> {
    const token = options.fence?.leaseToken ?? null;
    return this.#texts.append(id, kind, chunk, token, options.maxChars);
  }

  async readText(
    id: string,
    kind: TaskTextKind,
    offset: number,
    length: number,
  ): Promise<StoredText | undefined> {
    return this.#texts.read(id, kind, offset, length);
  }

  async list(query: ListQuery): Promise<ListPage> {
    const limit = clampListLimit(query.limit);
    const after = query.cursor === undefined ? undefined : decodeListCursor(query.cursor);
    const sql = listSql(this.#schema, {
      principal: query.principal !== undefined,
      tool: query.tool !== undefined,
      statuses: query.statuses !== undefined,
      cursor: after !== undefined,
    });
    const params: unknown[] = [this.#now(), limit + 1];
    if (query.principal !== undefined) params.push(query.principal);
    if (query.tool !== undefined) params.push(query.tool);
    if (query.statuses !== undefined) params.push([...query.statuses]);
    if (after !== undefined) params.push(after.createdAt, after.id);
    const rows = await this.#query(sql, params);
    const tasks = rows.slice(0, limit).map((row) => decodeRecord(row['fixed'], row['data']));
    const last = tasks[tasks.length - 1];
    return rows.length > limit && last !== undefined
      ? { tasks, nextCursor: encodeListCursor(last) }
      : { tasks };
  }

  async sweepExpired(limit: number): Promise<string[]> {
    if (limit <= 0) return [];
    const rows = await this.#query(this.#sql.sweep, [this.#now(), this.#origin, Math.floor(limit)]);
    const ids = rows.map((row) => row['id'] as string);
    for (const id of ids) this.events.emit('task:deleted', { id });
    return ids;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#onClose?.();
    await this.#pool.end();
  }

  /** The "now" parameter: undefined (null) lets the database's clock decide. */
  #now(): number | null {
    return this.#clock === undefined ? null : this.#clock();
  }

  /**
   * Undefined when an idempotency key already names a task (the caller looks it up); refused
   * (QUEUE_FULL) past the cap in params' last place.
   */
  async #insert(task: TaskRecord, params: unknown[]): Promise<Inserted | undefined> {
    const id = task.id;
    try {
      const rows = await this.#query(this.#sql.insert, [this.#now(), this.#origin, ...params]);
      const row = rows[0];
      if (row === undefined) throw queueFullError(task, params.at(-1) as number);
      const until = row['lease_expires_at'];
      return {
        leaseUntil: until === null || until === undefined ? null : Number(until),
        place: Number(row['place']),
      };
    } catch (error) {
      const constraint = uniqueViolation(error);
      if (constraint === 'tasks_by_idempotency_key') return undefined;
      if (constraint !== undefined) {
        throw new TaskrailError('CONFLICT', `task ${id} already exists`, { cause: error });
      }
      throw error;
    }
  }

  /**
   * A live task with the same (principal, key) wins; an expired one is deleted first. Two
   * creators racing on one key: the loser's insert hits the unique index and it looks again.
   */
  async #createWithKey(task: TaskRecord, params: unknown[]): Promise<Inserted | undefined> {
    for (let attempt = 0; attempt < KEY_RACE_RETRIES; attempt++) {
      const found = await this.#query(this.#sql.selectByKey, [
        this.#now(),
        task.principal,
        task.idempotencyKey,
      ]);
      const row = found[0];
      if (row !== undefined && row['live'] === true) return undefined;
      if (row !== undefined) await this.#deleteExpired(row['id'] as string);
      const inserted = await this.#insert(task, params);
      if (inserted !== undefined) return inserted;
    }
    throw new TaskrailError(
      'STORE_UNAVAILABLE',
      `${this.description}: could not settle idempotency key races for task ${task.id}`,
    );
  }

  async #deleteExpired(id: string): Promise<void> {
    const gone = await this.#query(this.#sql.deleteExpired, [this.#now(), this.#origin, id]);
    if (gone.length > 0) this.events.emit('task:deleted', { id });
  }

  async #existing(task: TaskRecord): Promise<CreateOutcome> {
    const found = await this.#query(this.#sql.selectByKey, [
      this.#now(),
      task.principal,
      task.idempotencyKey,
    ]);
    const row = found[0];
    if (row === undefined || row['live'] !== true) {
      throw new TaskrailError('CONFLICT', `task ${task.id}: its idempotency key changed hands`);
    }
    return { task: decodeRecord(row['fixed'], row['data']), created: false };
  }

  /** What a compare-and-set that wrote nothing reports: fenced out, or lost a race. */
  async #casLost(id: string, fence: WriteFence | undefined): Promise<CompareAndSetOutcome> {
    const row = (await this.#query(this.#sql.casLost, [this.#now(), id]))[0];
    if (row === undefined) return { ok: false, current: undefined };
    const current = decodeRecord(row['fixed'], row['data']);
    const live = !isTerminal(row['status'] as TaskStatus);
    return live && fenceRefuses(fence, row['lease_token'] as string | null)
      ? { ok: false, fenced: true, current }
      : { ok: false, current };
  }

  /** Copying a record for listeners costs time, so it is skipped when nobody listens. */
  #listened(id: string, from: TaskStatus, to: TaskStatus): boolean {
    return (
      this.events.wants('task:updated', id) ||
      (from !== to && this.events.wants('task:transition', id))
    );
  }

  /**
   * Every statement is prepared once per connection (named after its text): PostgreSQL then
   * parses and plans it once, not on every call.
   */
  async #query(sql: string, params: unknown[]): Promise<Row[]> {
    this.#assertOpen();
    let name = this.#names.get(sql);
    if (name === undefined) {
      name = `taskrail_${createHash('sha256').update(sql).digest('hex').slice(0, 24)}`;
      this.#names.set(sql, name);
    }
    try {
      return (await this.#pool.query<Row>({ name, text: sql, values: params })).rows;
    } catch (error) {
      throw storeError(error, this.description);
    }
  }

  #assertOpen(): void {
    if (this.#closed) throw storeClosedError(this.description);
  }
}
