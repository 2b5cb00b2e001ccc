import type Database from 'better-sqlite3';
import type { PermitAsk, PermitOutcome, PermitRequest, WriteFence } from '../../store/port.js';
import type { TaskRecord } from '../../task/record.js';
import {
  assertPermitLimit,
  assertPermitRequest,
  decidePermit,
  wakeable,
  type PermitWaiter,
} from '../shared/permits.js';

const LIVE_LEASE = 't.id = @task_id AND t.lease_token = @token AND t.lease_expires_at > @now';

const SQL = {
  leaseLive: `SELECT 1 FROM tasks AS t WHERE ${LIVE_LEASE}`,
  /**
   * The asker's own live permit (0/1), the other live permits of the key and whether anybody
   * waits for it, in one read.
   */
  count: `SELECT coalesce(sum(p.task_id = @task_id AND p.token = @token), 0) AS mine,
      coalesce(sum(p.task_id <> @task_id), 0) AS others,
      EXISTS (SELECT 1 FROM permit_waiters WHERE key = @key) AS waiting
    FROM permits AS p JOIN tasks AS t ON t.id = p.task_id AND t.lease_token = p.token
      AND t.lease_expires_at > @now
    WHERE p.key = @key`,
  anyWaiter: 'SELECT 1 FROM permit_waiters WHERE key = @key LIMIT 1',
  /** Every permit row of the key, live or not, and whether anybody waits: the fast path's read. */
  rows: `SELECT count(*) AS n, EXISTS (SELECT 1 FROM permit_waiters WHERE key = @key) AS waiting
    FROM permits WHERE key = @key`,
  createdAt: 'SELECT created_at AS createdAt FROM tasks WHERE id = @task_id',
  pruneHolders: `DELETE FROM permits WHERE key = @key AND NOT EXISTS (
      SELECT 1 FROM tasks AS t WHERE t.id = permits.task_id AND t.lease_token = permits.token
        AND t.lease_expires_at > @now)`,
  held: 'SELECT count(*) AS n FROM permits WHERE key = @key',
  pruneWaiters: `DELETE FROM permit_waiters WHERE key = @key AND NOT EXISTS (
      SELECT 1 FROM tasks AS t WHERE t.id = permit_waiters.task_id AND t.status = 'working'
        AND (t.expires_at IS NULL OR t.expires_at > @now))`,
  waiters:
    'SELECT task_id AS taskId, created_at AS createdAt FROM permit_waiters WHERE key = @key ' +
    'ORDER BY created_at, task_id',
  hold: 'INSERT OR REPLACE INTO permits (key, task_id, token) VALUES (@key, @task_id, @token)',
  unhold: 'DELETE FROM permits WHERE key = @key AND task_id = @task_id AND token = @token',
  unwait: 'DELETE FROM permit_waiters WHERE key = @key AND task_id = @task_id',
  wait:
    'INSERT OR IGNORE INTO permit_waiters (key, created_at, task_id) ' +
    'VALUES (@key, @created_at, @task_id)',
  // A hand-back of a live lease (see releaseLease): the waiter is then claimable at once.
  dropLease:
    'UPDATE tasks SET lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL ' +
    `WHERE id = @task_id AND lease_token = @token AND lease_expires_at > @now`,
} as const;

type Statements = { [K in keyof typeof SQL]: Database.Statement };
type PermitParams = { key: string; task_id: string; token: string; now: number };

/** The SQLite store's permits; every method runs inside the caller's write transaction. */
export class SqlitePermits {
  readonly #sql: Statements;

  constructor(db: Database.Database) {
    const entries = Object.entries(SQL).map(([name, sql]) => [name, db.prepare(sql)]);
    this.#sql = Object.fromEntries(entries) as Statements;
  }

  /**
   * The common case (the key has nobody waiting, room under the limit) costs a check of the
   * asker's lease, one read of the key's live permits and waiters, and the insert; dead permits
   * are pruned on refusal.
   */
  acquireInTx(request: PermitRequest, now: number): PermitOutcome {
    assertPermitRequest(request);
    const params = { key: request.key, task_id: request.taskId, token: request.token, now };
    if (this.#sql.leaseLive.get(params) === undefined) return { granted: false, wake: [] };
    return this.#decide(request, params);
  }

  /**
   * A permit asked for with a lease taken earlier in this transaction (a create, a claim): that
   * lease is live, so it is not read again.
   */
  askInTx(ask: PermitAsk, lease: { taskId: string; token: string }, now: number): PermitOutcome {
    const params = { key: ask.key, task_id: lease.taskId, token: lease.token, now };
    assertPermitRequest({ ...ask, ...lease, createdAt: 0 });
    // A new lease holds no permit yet. With nobody waiting and fewer rows than the limit, dead
    // or alive, there is room without judging each holder's lease.
    const { n, waiting } = this.#sql.rows.get(params) as { n: number; waiting: 0 | 1 };
    if (waiting === 0 && n < ask.limit) {
      this.#sql.hold.run(params);
      return { granted: true, wake: [] };
    }
    const row = this.#sql.createdAt.get({ task_id: lease.taskId }) as { createdAt: number };
    return this.#decide({ ...ask, ...lease, createdAt: row.createdAt }, params);
  }

  #decide(request: PermitRequest, params: PermitParams): PermitOutcome {
    const counted = this.#sql.count.get(params) as { mine: number; others: number; waiting: 0 | 1 };
    const { mine, others } = counted;
    const waiting = counted.waiting === 1;
    if (mine > 0) {
      if (waiting) this.#sql.unwait.run(params);
      return { granted: true, wake: [] };
    }
    const waiters = waiting ? this.#waiters(params) : [];
    const decision = decidePermit({ held: others, waiters }, request);
    if (decision.granted) {
      this.#sql.hold.run(params);
      if (waiting) this.#sql.unwait.run(params);
      return decision;
    }
    this.#sql.pruneHolders.run(params);
    this.#sql.wait.run({ ...params, created_at: request.createdAt });
    if (request.releaseOnRefusal === true) this.#sql.dropLease.run(params);
    return decision;
  }

  /** A write under `fence` that took the task out of `working` gives its permit back too. */
  endedInTx(fence: WriteFence | undefined, next: TaskRecord, now: number): string[] | undefined {
    if (fence?.permit === undefined || next.status === 'working') return undefined;
    const { key, limit } = fence.permit;
    return this.releaseInTx(key, limit, next.id, fence.leaseToken, now);
  }

  releaseInTx(key: string, limit: number, taskId: string, token: string, now: number): string[] {
    assertPermitLimit(limit);
    const params = { key, task_id: taskId, token, now };
    this.#sql.unhold.run(params);
    if (this.#sql.anyWaiter.get(params) === undefined) return [];
    this.#sql.pruneHolders.run(params);
    const { n: held } = this.#sql.held.get(params) as { n: number };
    return wakeable(this.#waiters(params), limit - held);
  }

  #waiters(params: { key: string; now: number }): PermitWaiter[] {
    this.#sql.pruneWaiters.run({ key: params.key, now: params.now });
    return this.#sql.waiters.all({ key: params.key }) as PermitWaiter[];
  }
}
