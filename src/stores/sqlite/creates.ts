import type { CreateOptions, CreateOutcome, LeaseGrant } from '../../store/port.js';
import { TaskrailError } from '../../task/errors.js';
import { newToken } from '../../task/ids.js';
import { isExpired, type TaskRecord } from '../../task/record.js';
import type { Clock } from '../../task/time.js';
import { queueFullError } from '../shared/checks.js';
import type { SqlitePermits } from './permits.js';
import type { ReadCache } from './read-cache.js';
import { recordToParams, rowToRecord, type TaskRow } from './rows.js';
import type { Statements } from './statements.js';
import type { UnfinishedCounts } from './unfinished.js';

/** `row`: what was written, from which listeners get their own copy. */
export type Created = CreateOutcome & { staleId?: string; row?: TaskRow };
type LeaseColumns = { lease_owner: string; lease_token: string; lease_expires_at: number };

/**
 * The SQLite store's create transaction: the idempotency key, the per-principal cap, and the
 * lease (with its permit) taken at once. Runs inside the caller's write transaction.
 */
export class SqliteCreates {
  readonly #sql: Statements;
  readonly #cache: ReadCache;
  readonly #permits: SqlitePermits;
  readonly #clock: Clock;
  readonly #counts: UnfinishedCounts;
  /** Removes an expired task that still holds the new task's idempotency key. */
  readonly #deleteTask: (id: string) => void;

  constructor(
    sql: Statements,
    cache: ReadCache,
    permits: SqlitePermits,
    clock: Clock,
    counts: UnfinishedCounts,
    deleteTask: (id: string) => void,
  ) {
    this.#sql = sql;
    this.#cache = cache;
    this.#permits = permits;
    this.#clock = clock;
    this.#counts = counts;
    this.#deleteTask = deleteTask;
  }

  createInTx(task: TaskRecord, lease: CreateOptions['lease'], cap: number | undefined): Created {
    if (task.idempotencyKey !== undefined || lease !== undefined || cap !== undefined) {
      return this.#createChecked(task, this.#clock(), lease, cap);
    }
    const inserted = this.#insert(task);
    return { task: inserted.task, created: true, row: inserted.row };
  }

  /**
   * Inserts, with `lease` held from the start if given; returns the record as stored (a copy
   * rebuilt from the written columns) and its row.
   */
  #insert(task: TaskRecord, lease?: LeaseColumns): { task: TaskRecord; row: TaskRow } {
    const row = recordToParams(task);
    this.#cache.drop(task.id);
    try {
      if (lease === undefined) this.#sql.insertTask.run(row);
      else this.#sql.insertLeasedTask.run(Object.assign(row, lease));
      this.#counts.changed(task.principal, undefined, task.status);
      return { task: rowToRecord(row), row };
    } catch (error) {
      if ((error as { code?: unknown }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
        throw new TaskrailError('CONFLICT', `task ${task.id} already exists`, { cause: error });
      }
      throw error;
    }
  }

  #createChecked(
    task: TaskRecord,
    now: number,
    lease: CreateOptions['lease'],
    cap: number | undefined,
  ): Created {
    const row =
      task.idempotencyKey === undefined
        ? undefined
        : (this.#sql.selectByIdempotencyKey.get(task.principal, task.idempotencyKey) as
            TaskRow | undefined);
    if (row !== undefined && !isExpired({ expiresAt: row.expires_at }, now)) {
      return { task: rowToRecord(row), created: false };
    }
    if (row !== undefined) this.#deleteTask(row.id);
    const position = cap === undefined ? undefined : this.#place(task, cap);
    // Only a working task is leased (a record may be created already finished).
    let grant: LeaseGrant | undefined;
    let columns: LeaseColumns | undefined;
    if (lease !== undefined && task.status === 'working') {
      grant = { token: newToken(), expiresAt: now + lease.leaseMs, interrupted: false };
      columns = {
        lease_owner: lease.owner,
        lease_token: grant.token,
        lease_expires_at: grant.expiresAt,
      };
    }
    const created = this.#insert(task, columns);
    const outcome: Created = { task: created.task, created: true, row: created.row };
    if (grant !== undefined && lease?.permit !== undefined) {
      grant.permit = this.#permits.askInTx(
        lease.permit,
        { taskId: task.id, token: grant.token },
        now,
      );
    }
    if (grant !== undefined) outcome.lease = grant;
    if (row !== undefined) outcome.staleId = row.id;
    if (position !== undefined) outcome.position = position;
    return outcome;
  }

  /** The new task's place among its principal's unfinished, refused past the cap. */
  #place(task: TaskRecord, cap: number): number {
    const unfinished = this.#counts.count(task.principal);
    if (unfinished >= cap) throw queueFullError(task, cap);
    return unfinished + 1;
  }
}
