import type pg from 'pg';
import type { PermitOutcome, PermitRequest } from '../../store/port.js';
import {
  assertPermitLimit,
  assertPermitRequest,
  decidePermit,
  wakeable,
  type PermitWaiter,
} from '../shared/permits.js';
import { storeError } from './errors.js';

/** One lock class for permit keys (two-key advisory lock: the class, then the key's hash). */
const PERMIT_LOCK_CLASS = 0x7065726d; // 'perm'

function permitStatements(s: string) {
  return {
    /** $1 now (null: the database's clock), $2 schema-qualified key. */
    lock: `SELECT pg_advisory_xact_lock(${PERMIT_LOCK_CLASS}, hashtext($2)),
        COALESCE($1::float8, (extract(epoch FROM now()) * 1000)::float8) AS now`,
    /** $1 now, $2 task, $3 token. */
    leaseLive: `SELECT 1 FROM ${s}.tasks WHERE id = $2 AND lease_token = $3 AND lease_expires_at > $1`,
    /** $1 now, $2 key. */
    pruneHolders: `DELETE FROM ${s}.permits AS p WHERE p.key = $2 AND NOT EXISTS (
        SELECT 1 FROM ${s}.tasks AS t WHERE t.id = p.task_id AND t.lease_token = p.token
          AND t.lease_expires_at > $1)`,
    holders: `SELECT task_id, token FROM ${s}.permits WHERE key = $1`,
    pruneWaiters: `DELETE FROM ${s}.permit_waiters AS w WHERE w.key = $2 AND NOT EXISTS (
        SELECT 1 FROM ${s}.tasks AS t WHERE t.id = w.task_id AND t.status = 'working'
          AND (t.expires_at IS NULL OR t.expires_at > $1))`,
    waiters: `SELECT task_id, created_at FROM ${s}.permit_waiters WHERE key = $1
        ORDER BY created_at, task_id`,
    /** $1 key, $2 task, $3 token. */
    hold: `INSERT INTO ${s}.permits (key, task_id, token) VALUES ($1, $2, $3)
        ON CONFLICT (key, task_id) DO UPDATE SET token = EXCLUDED.token`,
    unhold: `DELETE FROM ${s}.permits WHERE key = $1 AND task_id = $2 AND token = $3`,
    /** $1 key, $2 task. */
    unwait: `DELETE FROM ${s}.permit_waiters WHERE key = $1 AND task_id = $2`,
    /** $1 key, $2 task, $3 created at. */
    wait: `INSERT INTO ${s}.permit_waiters (key, task_id, created_at) VALUES ($1, $2, $3)
        ON CONFLICT DO NOTHING`,
    /** $1 now, $2 task, $3 token: a hand-back of a live lease, claimable at once. */
    dropLease: `UPDATE ${s}.tasks SET lease_owner = NULL, lease_token = NULL,
        lease_expires_at = NULL WHERE id = $2 AND lease_token = $3 AND lease_expires_at > $1`,
  };
}

type Sql = ReturnType<typeof permitStatements>;

/**
 * The PostgreSQL store's permits. Each operation is one transaction holding an advisory lock
 * on its key, so the live permits of a key are counted and taken by one writer at a time.
 */
export class PostgresPermits {
  readonly #sql: Sql;

  constructor(
    private readonly pool: pg.Pool,
    private readonly schema: string,
    private readonly description: string,
    private readonly clock: (() => number) | undefined,
  ) {
    this.#sql = permitStatements(schema);
  }

  acquire(request: PermitRequest): Promise<PermitOutcome> {
    assertPermitRequest(request);
    return this.#transaction(request.key, async (client, now) => {
      const { key, taskId, token } = request;
      const live = await client.query(this.#sql.leaseLive, [now, taskId, token]);
      if (live.rowCount === 0) return { granted: false, wake: [] };
      const holders = await this.#holders(client, key, now);
      if (holders.some((h) => h.task_id === taskId && h.token === token)) {
        await client.query(this.#sql.unwait, [key, taskId]);
        return { granted: true, wake: [] };
      }
      const held = holders.filter((h) => h.task_id !== taskId).length;
      const decision = decidePermit(
        { held, waiters: await this.#waiters(client, key, now) },
        request,
      );
      if (decision.granted) {
        await client.query(this.#sql.hold, [key, taskId, token]);
        await client.query(this.#sql.unwait, [key, taskId]);
        return decision;
      }
      await client.query(this.#sql.wait, [key, taskId, request.createdAt]);
      if (request.releaseOnRefusal === true) {
        await client.query(this.#sql.dropLease, [now, taskId, token]);
      }
      return decision;
    });
  }

  release(key: string, limit: number, taskId: string, token: string): Promise<string[]> {
    assertPermitLimit(limit);
    return this.#transaction(key, async (client, now) => {
      await client.query(this.#sql.unhold, [key, taskId, token]);
      const held = (await this.#holders(client, key, now)).length;
      return wakeable(await this.#waiters(client, key, now), limit - held);
    });
  }

  async #holders(client: pg.PoolClient, key: string, now: number) {
    await client.query(this.#sql.pruneHolders, [now, key]);
    const { rows } = await client.query<{ task_id: string; token: string }>(this.#sql.holders, [
      key,
    ]);
    return rows;
  }

  async #waiters(client: pg.PoolClient, key: string, now: number): Promise<PermitWaiter[]> {
    await client.query(this.#sql.pruneWaiters, [now, key]);
    const { rows } = await client.query<{ task_id: string; created_at: number }>(
      this.#sql.waiters,
      [key],
    );
    return rows.map((row) => ({ taskId: row.task_id, createdAt: Number(row.created_at) }));
  }

  async #transaction<T>(
    key: string,
    work: (client: pg.PoolClient, now: number) => Promise<T>,
  ): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw storeError(error, this.description);
    }
    try {
      await client.query('BEGIN');
      const clock = this.clock === undefined ? null : this.clock();
      const locked = await client.query<{ now: number }>(this.#sql.lock, [
        clock,
        `${this.schema}:${key}`,
      ]);
      const result = await work(client, Number(locked.rows[0]?.now));
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw storeError(error, this.description);
    } finally {
      client.release();
    }
  }
}
