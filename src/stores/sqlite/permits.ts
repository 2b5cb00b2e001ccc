import type Database from 'better-sqlite3';
import type { PermitOutcome, PermitRequest } from '../../store/port.js';
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
  pruneHolders: `DELETE FROM permits WHERE key = @key AND NOT EXISTS (
      SELECT 1 FROM tasks AS t WHERE t.id = permits.task_id AND t.lease_token = permits.token
        AND t.lease_expires_at > @now)`,
  holders: 'SELECT task_id AS taskId, token FROM permits WHERE key = @key',
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

/** The SQLite store's permits; every method runs inside the caller's write transaction. */
export class SqlitePermits {
  readonly #sql: Statements;

  constructor(db: Database.Database) {
    const entries = Object.entries(SQL).map(([name, sql]) => [name, db.prepare(sql)]);
    this.#sql = Object.fromEntries(entries) as Statements;
  }

  acquireInTx(request: PermitRequest, now: number): PermitOutcome {
    assertPermitRequest(request);
    const params = { key: request.key, task_id: request.taskId, token: request.token, now };
    if (this.#sql.leaseLive.get(params) === undefined) return { granted: false, wake: [] };
    const holders = this.#holders(params);
    if (holders.some((h) => h.taskId === request.taskId && h.token === request.token)) {
      this.#sql.unwait.run(params);
      return { granted: true, wake: [] };
    }
    const held = holders.filter((h) => h.taskId !== request.taskId).length;
    const decision = decidePermit({ held, waiters: this.#waiters(params) }, request);
    if (decision.granted) {
      this.#sql.hold.run(params);
      this.#sql.unwait.run(params);
      return decision;
    }
    this.#sql.wait.run({ ...params, created_at: request.createdAt });
    if (request.releaseOnRefusal === true) this.#sql.dropLease.run(params);
    return decision;
  }

  releaseInTx(key: string, limit: number, taskId: string, token: string, now: number): string[] {
    assertPermitLimit(limit);
    const params = { key, task_id: taskId, token, now };
    this.#sql.unhold.run(params);
    const held = this.#holders(params).length;
    return wakeable(this.#waiters(params), limit - held);
  }

  #holders(params: { key: string; now: number }): { taskId: string; token: string }[] {
    this.#sql.pruneHolders.run({ key: params.key, now: params.now });
    return this.#sql.holders.all({ key: params.key }) as { taskId: string; token: string }[];
  }

  #waiters(params: { key: string; now: number }): PermitWaiter[] {
    this.#sql.pruneWaiters.run({ key: params.key, now: params.now });
    return this.#sql.waiters.all({ key: params.key }) as PermitWaiter[];
  }
}
