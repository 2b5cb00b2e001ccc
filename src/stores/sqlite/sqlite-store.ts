import { resolve } from 'node:path';
import type Database from 'better-sqlite3';
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
  SaveStepOutcome,
  TaskStore,
  WriteFence,
  PermitOutcome,
  PermitRequest,
} from '../../store/port.js';
import { TaskEvents } from '../../store/events.js';
import { TaskrailError } from '../../task/errors.js';
import { isExpired, type TaskRecord } from '../../task/record.js';
import type { TaskStatus } from '../../task/status.js';
import { isTerminal } from '../../task/status.js';
import { systemClock, type Clock } from '../../task/time.js';
import {
  assertDelayMs,
  assertLeaseMs,
  assertNextRevision,
  capOf,
  fenceRefuses,
} from '../shared/checks.js';
import { Checkpointer } from './checkpointer.js';
import { SqliteCreates } from './creates.js';
import { GroupCommit } from './group-commit.js';
import { SYNC_BUSY_WAIT_MS, withLockWaits } from './lock-wait.js';
import { openDatabase } from './open-database.js';
import type { SqliteTaskStoreOptions } from './options.js';
import { casParams, rawHead, rawRowToRecord, rowToRecord, type TaskRow } from './rows.js';
import { listPage, ListStatements } from './list.js';
import { SqliteLeases } from './leases.js';
import { SqlitePermits } from './permits.js';
import { ReadCache, READ_CACHE_ROWS } from './read-cache.js';
import { prepareStatements, type Statements } from './statements.js';
import { readSteps } from './steps.js';
import { SqliteTexts } from './texts.js';
import { UnfinishedCounts } from './unfinished.js';
import { WalIndexWitness } from './wal-index.js';
import { WaitAlarm, waitQueries } from './wait-alarm.js';

const defaultWarn = (message: string) => process.emitWarning(`taskrail: ${message}`);

/** `row`: what was written, from which listeners get their own copy. */
type CasResult = { outcome: CompareAndSetOutcome; previous?: TaskStatus; row?: TaskRow };

/**
 * A `TaskStore` in one SQLite file (better-sqlite3, WAL). Several processes may open the same
 * file: writes run in IMMEDIATE transactions (concurrent ones batched, see group-commit.ts;
 * the `…InTx` methods run inside one), each a compare-and-set on the revision.
 * Events are local: listeners hear only the writes made through this instance, not those of
 * other processes sharing the file.
 */
export class SqliteTaskStore implements TaskStore {
  readonly description: string;
  readonly events = new TaskEvents();
  readonly path: string;
  readonly #db: Database.Database;
  readonly #clock: Clock;
  readonly #sql: Statements;
  readonly #lists: ListStatements;
  readonly #lockBudgetMs: number;
  /** Concurrent writes share one transaction; with `synchronous: 'full'` also one fsync. */
  readonly #group: GroupCommit;
  /** WAL checkpoints run in a worker thread, not inside a commit on the event loop. */
  readonly #checkpointer: Checkpointer;
  /** Rows `get` read, kept while no other connection commits (see read-cache.ts). */
  readonly #cache: ReadCache;
  /** Wakes durable waits at their time, also those set before this process opened the file. */
  readonly #alarm: WaitAlarm;
  readonly #permits: SqlitePermits;
  readonly #texts: SqliteTexts;
  readonly #creates: SqliteCreates;
  readonly #leases: SqliteLeases;
  readonly #counts: UnfinishedCounts;
  #closed = false;
  #closing: Promise<void> | undefined;

  constructor(path: string, options: SqliteTaskStoreOptions = {}) {
    this.path = resolve(path);
    this.description = `sqlite task store at ${this.path}`;
    this.#clock = options.clock ?? systemClock;
    this.#lockBudgetMs = Math.max(0, options.busyTimeoutMs ?? 5000);
    this.#db = openDatabase(this.path, {
      busyTimeoutMs: Math.min(SYNC_BUSY_WAIT_MS, this.#lockBudgetMs),
      openBusyTimeoutMs: this.#lockBudgetMs,
      synchronous: options.synchronous ?? 'normal',
      now: this.#clock(),
    });
    this.#sql = prepareStatements(this.#db);
    this.#lists = new ListStatements(this.#db);
    this.#permits = new SqlitePermits(this.#db);
    this.#texts = new SqliteTexts(this.#db);
    const dataVersion = this.#db.prepare('PRAGMA data_version').pluck();
    const rows = options.readCacheRows ?? READ_CACHE_ROWS;
    const witness = rows > 0 ? WalIndexWitness.open(this.path) : undefined;
    this.#cache = new ReadCache(() => dataVersion.get(), rows, witness);
    this.#counts = new UnfinishedCounts(this.#db);
    this.#creates = new SqliteCreates(
      this.#sql,
      this.#cache,
      this.#permits,
      this.#clock,
      this.#counts,
      (id) => this.#deleteTask(id),
    );
    this.#leases = new SqliteLeases(this.#sql, this.#cache, this.#permits, this.#clock);
    this.#group = new GroupCommit(
      this.#db,
      (operation) => this.#run(operation),
      this.#counts,
      () => this.#checkpointer.committed(),
    );
    const warn = options.onWarning ?? defaultWarn;
    this.#checkpointer = new Checkpointer(this.#db, this.path, { warn });
    this.#alarm = new WaitAlarm(
      this.#clock,
      waitQueries(this.#sql, this.#run.bind(this)),
      (error) => {
        if (!this.#closed) warn(`could not read the next durable wait: ${String(error)}`);
      },
    );
  }

  /** Whether WAL checkpoints currently run in the worker thread (tests and diagnostics). */
  get checkpointWorker(): { running: boolean; checkpointedFrames: number; walLooks: number } {
    const { running, checkpointedFrames, walLooks } = this.#checkpointer;
    return { running, checkpointedFrames, walLooks };
  }

  /** How many task rows `get` currently answers from memory (tests and diagnostics). */
  get readCacheRows(): number {
    return this.#cache.size;
  }

  /** The durability in force on this file's connection (read back from SQLite itself). */
  get synchronous(): 'normal' | 'full' {
    return this.#db.pragma('synchronous', { simple: true }) === 2 ? 'full' : 'normal';
  }

  async create(task: TaskRecord, options: CreateOptions = {}): Promise<CreateOutcome> {
    if (options.lease !== undefined) assertLeaseMs(options.lease.leaseMs);
    // Only a keyed create can refuse after a change: a conflicting insert after it deleted an
    // expired task holding the same key.
    const savepoint = task.idempotencyKey !== undefined;
    const cap = capOf(task, options.maxUnfinished);
    const result = await this.#group.write(
      () => this.#creates.createInTx(task, options.lease, cap),
      { savepoint },
    );
    if (result.staleId !== undefined) this.events.emit('task:deleted', { id: result.staleId });
    if (
      result.created &&
      result.row !== undefined &&
      this.events.listenerCount('task:created') > 0
    ) {
      this.events.emit('task:created', { task: rowToRecord(result.row) });
    }
    // Only the outcome leaves (the row and a stale id stay here).
    const outcome: CreateOutcome = { task: result.task, created: result.created };
    if (result.lease !== undefined) outcome.lease = result.lease;
    if (result.position !== undefined) outcome.position = result.position;
    return outcome;
  }

  /** A cached row is served after the next check phase's one validation (read-cache.ts). */
  get(id: string): Promise<TaskRecord | undefined> {
    if (!this.#cache.has(id)) return this.#run(() => this.#readTask(id, true));
    return this.#cache.checkSoon().then((checked) => this.#run(() => this.#readTask(id, !checked)));
  }

  #readTask(id: string, validate: boolean): TaskRecord | undefined {
    const now = this.#clock();
    const select = () => this.#sql.selectVisibleTask.get(id, now) as unknown[] | undefined;
    const values = this.#cache.read(id, now, select, validate);
    return values === undefined ? undefined : rawRowToRecord(values);
  }

  async compareAndSet(
    next: TaskRecord,
    expectedRevision: number,
    fence?: WriteFence,
  ): Promise<CompareAndSetOutcome> {
    assertNextRevision(next, expectedRevision);
    const { outcome, previous, row } = await this.#group.write(() =>
      this.#casInTx(next, expectedRevision, this.#clock(), fence),
    );
    if (outcome.ok && previous !== undefined && row !== undefined) {
      // Listeners get their own copy, read back from the written columns as a `get` would.
      if (this.#listened(next.id, previous, outcome.task.status)) {
        this.events.emitWrite(rowToRecord(row), previous);
      }
    }
    return outcome;
  }

  async claim(
    id: string,
    owner: string,
    leaseMs: number,
    options: ClaimOptions = {},
  ): Promise<LeaseGrant | undefined> {
    assertLeaseMs(leaseMs);
    return this.#group.write(() => this.#leases.claimInTx(id, owner, leaseMs, options));
  }

  async renewLease(id: string, token: string, leaseMs: number): Promise<LeaseRenewal> {
    assertLeaseMs(leaseMs);
    return this.#group.write(() => this.#leases.renewInTx(id, token, leaseMs));
  }

  async releaseLease(id: string, token: string, options: ReleaseOptions = {}): Promise<void> {
    const statement = options.abandoned === true ? this.#sql.abandonLease : this.#sql.releaseLease;
    await this.#group.write(() => {
      this.#cache.drop(id);
      return statement.run({ id, token, now: this.#clock() });
    });
  }

  async releaseUntil(id: string, token: string, delayMs: number): Promise<number | undefined> {
    assertDelayMs(delayMs);
    const wakeAt = await this.#group.write(() => {
      this.#cache.drop(id);
      const now = this.#clock();
      const wakeAt = now + delayMs;
      const changed = this.#sql.waitLease.run({ id, token, now, wake_at: wakeAt }).changes > 0;
      return changed ? wakeAt : undefined;
    });
    if (wakeAt !== undefined) this.#alarm.waitSet(wakeAt);
    return wakeAt;
  }

  async acquirePermit(request: PermitRequest): Promise<PermitOutcome> {
    return this.#group.write(() => {
      this.#cache.drop(request.taskId);
      return this.#permits.acquireInTx(request, this.#clock());
    });
  }

  async releasePermit(
    key: string,
    limit: number,
    taskId: string,
    token: string,
  ): Promise<string[]> {
    return this.#group.write(() =>
      this.#permits.releaseInTx(key, limit, taskId, token, this.#clock()),
    );
  }

  /**
   * Hands `onDue` each task whose durable wait is over, at its wake time on this store's clock:
   * those set through this store, and those already in the file when it was opened (a restart).
   */
  onWaitsDue(onDue: (taskId: string) => void): () => void {
    return this.#alarm.watch(onDue);
  }

  async findRunnable(limit: number): Promise<string[]> {
    return this.#run(() => {
      const params = { now: this.#clock(), limit: Math.max(0, Math.floor(limit)) };
      return (this.#sql.selectRunnable.all(params) as { id: string }[]).map((row) => row.id);
    });
  }

  async findLeased(limit: number): Promise<LeaseHolder[]> {
    return this.#run(() => {
      const params = { now: this.#clock(), limit: Math.max(0, Math.floor(limit)) };
      return this.#sql.selectLeased.all(params) as LeaseHolder[];
    });
  }

  async saveStep(
    id: string,
    name: string,
    value: unknown,
    fence?: WriteFence,
  ): Promise<SaveStepOutcome> {
    const json = JSON.stringify(value ?? null);
    return this.#group.write(() => this.#saveStepInTx(id, name, json, fence));
  }

  async loadSteps(id: string): Promise<Record<string, unknown>> {
    return this.#run(() => {
      if (this.#sql.selectVisibleStatus.get({ id, now: this.#clock() }) === undefined) return {};
      return readSteps(this.#sql, id);
    });
  }

  // Properties, typed by the port: the store's file stays short (texts.ts does the work).
  appendText: TaskStore['appendText'] = async (id, kind, chunk, options = {}) => {
    const outcome = await this.#group.write(() =>
      this.#texts.append(id, kind, chunk, options, this.#visibleLease(id)),
    );
    if (outcome.ok) this.events.emit('task:text', { id, kind, end: outcome.end });
    return outcome;
  };

  readText: TaskStore['readText'] = async (id, kind, offset, length) =>
    this.#run(() => {
      const live = this.#sql.selectVisibleStatus.get({ id, now: this.#clock() }) !== undefined;
      return live ? this.#texts.read(id, kind, offset, length) : undefined;
    });

  async list(query: ListQuery): Promise<ListPage> {
    const page = listPage(query); // a malformed cursor is refused before any SQL
    return this.#run(() => this.#lists.read(page, this.#clock()));
  }

  async countUnfinished(principal: string, atMost: number): Promise<number> {
    return this.#run(() => {
      const params = { principal, limit: Math.max(0, Math.floor(atMost)) };
      const row = this.#sql.countUnfinished.get(params) as { n: number } | undefined;
      return Math.max(0, row?.n ?? 0);
    });
  }

  async sweepExpired(limit: number): Promise<string[]> {
    const ids = await this.#group.write(() => this.#sweepInTx(limit));
    for (const id of ids) this.events.emit('task:deleted', { id });
    return ids;
  }

  async close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#alarm.stop();
    if (this.#group.pending) await this.#group.settled();
    this.#closed = true;
    const workerStopped = this.#checkpointer.close();
    // Synchronously, as without a worker: copies what is left and empties the WAL, so a file
    // closed is a complete database file (busy if the worker is mid-checkpoint: then the WAL
    // stays, and the next open reads it).
    try {
      this.#db.pragma('wal_checkpoint(TRUNCATE)');
    } catch {
      // a lock held by another process: the WAL stays, nothing is lost
    }
    this.#db.close();
    // Only now, with no connection of ours left on the file: closing the witness's descriptor
    // earlier dropped the checkpoint thread's locks (wal-index.ts, SharedShmFile).
    await workerStopped;
    this.#cache.close();
  }

  /**
   * Copying a record for listeners costs time, so it is skipped when no listener wants this
   * task (the runtime follows only the tasks it runs, and a task's own finishing write comes
   * after its run let go of it).
   */
  #listened(id: string, from: TaskStatus, to: TaskStatus): boolean {
    return (
      this.events.wants('task:updated', id) ||
      (from !== to && this.events.wants('task:transition', id))
    );
  }

  /** Runs one synchronous operation, waiting out another process's lock asynchronously. */
  #run<T>(operation: () => T): Promise<T> {
    return withLockWaits(operation, this.#lockBudgetMs, () => this.#closed);
  }

  #casInTx(next: TaskRecord, expected: number, now: number, fence?: WriteFence): CasResult {
    const values = this.#sql.selectHead.get(next.id) as unknown[] | undefined;
    const stored = values === undefined ? undefined : rawHead(values);
    if (stored === undefined || isExpired({ expiresAt: stored.expires_at }, now)) {
      return { outcome: { ok: false, current: undefined } };
    }
    const status = stored.status as TaskStatus;
    const fenced = !isTerminal(status) && fenceRefuses(fence, stored.lease_token);
    if (fenced || stored.revision !== expected || isTerminal(status)) {
      const current = rowToRecord(this.#sql.selectTask.get(next.id) as TaskRow);
      return { outcome: fenced ? { ok: false, fenced, current } : { ok: false, current } };
    }
    // One object serves as the statement's parameters and, read back, as the stored record.
    const row = casParams(stored, next, expected);
    const expiryChanged = row.expires_at !== stored.expires_at || row.ttl_ms !== stored.ttl_ms;
    const update = expiryChanged ? this.#sql.updateTaskAndExpiry : this.#sql.updateTask;
    // The same statement drops the lease when the task leaves `working`.
    this.#cache.drop(next.id);
    if (update.run(row).changes > 0) this.#counts.changed(stored.principal, status, row.status);
    const task = rowToRecord(row);
    const wake = this.#permits.endedInTx(fence, next, now);
    const outcome =
      wake === undefined ? { ok: true as const, task } : { ok: true as const, task, wake };
    return { outcome, previous: status, row };
  }

  /** The lease token of a live task (null: none); rejects with TASK_NOT_FOUND when absent. */
  #visibleLease(id: string): string | null {
    const row = this.#sql.selectVisibleLease.get({ id, now: this.#clock() }) as
      { lease_token: string | null } | undefined;
    if (row === undefined) throw new TaskrailError('TASK_NOT_FOUND', `task ${id} not found`);
    return row.lease_token;
  }

  #saveStepInTx(id: string, name: string, json: string, fence?: WriteFence): SaveStepOutcome {
    if (fenceRefuses(fence, this.#visibleLease(id))) return { ok: false, fenced: true };
    this.#sql.upsertStep.run(id, name, json);
    return { ok: true };
  }

  #sweepInTx(limit: number): string[] {
    const rows = this.#sql.selectExpired.all(this.#clock(), Math.max(0, Math.floor(limit)));
    const ids = (rows as { id: string }[]).map((row) => row.id);
    for (const id of ids) this.#deleteTask(id);
    return ids;
  }

  #deleteTask(id: string): void {
    this.#cache.drop(id);
    this.#sql.deleteSteps.run(id);
    this.#texts.delete(id);
    const gone = this.#sql.deleteTask.get(id) as { principal: string; status: string } | undefined;
    if (gone !== undefined) this.#counts.changed(gone.principal, gone.status, undefined);
  }
}
