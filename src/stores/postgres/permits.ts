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
    /**
     * $1 now, $2 key, $3 task, $4 token. One round trip: drops the key's dead permits and
     * waiters, returns the live ones and whether the asker's lease is live.
     */
    book: `WITH live_holders AS (
        SELECT p.task_id, p.token FROM ${s}.permits AS p
          JOIN ${s}.tasks AS t ON t.id = p.task_id AND t.lease_token = p.token
            AND t.lease_expires_at > $1
          WHERE p.key = $2),
      dropped_holders AS (
        DELETE FROM ${s}.permits AS p WHERE p.key = $2 AND NOT EXISTS (
          SELECT 1 FROM live_holders AS l WHERE l.task_id = p.task_id AND l.token = p.token)),
      live_waiters AS (
        SELECT w.task_id, w.created_at FROM ${s}.permit_waiters AS w
          JOIN ${s}.tasks AS t ON t.id = w.task_id AND t.status = 'working'
            AND (t.expires_at IS NULL OR t.expires_at > $1)
          WHERE w.key = $2),
      dropped_waiters AS (
        DELETE FROM ${s}.permit_waiters AS w WHERE w.key = $2 AND NOT EXISTS (
          SELECT 1 FROM live_waiters AS l WHERE l.task_id = w.task_id))
      SELECT
        (SELECT coalesce(json_agg(json_build_array(task_id, token)), '[]') FROM live_holders)
          AS holders,
        (SELECT coalesce(json_agg(json_build_array(task_id, created_at)
            ORDER BY created_at, task_id), '[]') FROM live_waiters) AS waiters,
        EXISTS (SELECT 1 FROM ${s}.tasks WHERE id = $3 AND lease_token = $4
          AND lease_expires_at > $1) AS lease_live`,
    /** $1 key, $2 task, $3 token: the permit taken, the asker no longer waiting. */
    hold: `WITH held AS (
        INSERT INTO ${s}.permits (key, task_id, token) VALUES ($1, $2, $3)
          ON CONFLICT (key, task_id) DO UPDATE SET token = EXCLUDED.token)
      DELETE FROM ${s}.permit_waiters WHERE key = $1 AND task_id = $2`,
    /** $1 task. */
    createdAt: `SELECT created_at FROM ${s}.tasks WHERE id = $1`,
    /** $1 key, $2 task, $3 token. */
    unhold: `DELETE FROM ${s}.permits WHERE key = $1 AND task_id = $2 AND token = $3`,
    /** $1 key, $2 task. */
    unwait: `DELETE FROM ${s}.permit_waiters WHERE key = $1 AND task_id = $2`,
    /**
     * $1 key, $2 task, $3 created at, $4 now, $5 token, $6 give the lease back: recorded as
     * waiting, and with $6 its live lease handed back (claimable at once).
     */
    wait: `WITH waiting AS (
        INSERT INTO ${s}.permit_waiters (key, task_id, created_at) VALUES ($1, $2, $3)
          ON CONFLICT DO NOTHING)
      UPDATE ${s}.tasks SET lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL
        WHERE $6::boolean AND id = $2 AND lease_token = $5 AND lease_expires_at > $4`,
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
      const book = await this.#book(client, now, request);
      if (!book.leaseLive) return { granted: false, wake: [] };
      if (book.holders.some(([id, held]) => id === taskId && held === token)) {
        await client.query(this.#sql.unwait, [key, taskId]);
        return { granted: true, wake: [] };
      }
      const held = book.holders.filter(([id]) => id !== taskId).length;
      const decision = decidePermit({ held, waiters: book.waiters }, request);
      if (decision.granted) {
        await client.query(this.#sql.hold, [key, taskId, token]);
        return decision;
      }
      const giveBack = request.releaseOnRefusal === true;
      await client.query(this.#sql.wait, [key, taskId, request.createdAt, now, token, giveBack]);
      return decision;
    });
  }

  release(key: string, limit: number, taskId: string, token: string): Promise<string[]> {
    assertPermitLimit(limit);
    return this.#transaction(key, async (client, now) => {
      await client.query(this.#sql.unhold, [key, taskId, token]);
      const book = await this.#book(client, now, { key, taskId, token });
      return wakeable(book.waiters, limit - book.holders.length);
    });
  }

  async createdAt(taskId: string): Promise<number> {
    try {
      const { rows } = await this.pool.query<{ created_at: string }>(this.#sql.createdAt, [taskId]);
      return Number(rows[0]?.created_at ?? 0);
    } catch (error) {
      throw storeError(error, this.description);
    }
  }

  async #book(
    client: pg.PoolClient,
    now: number,
    { key, taskId, token }: Pick<PermitRequest, 'key' | 'taskId' | 'token'>,
  ): Promise<{ holders: [string, string][]; waiters: PermitWaiter[]; leaseLive: boolean }> {
    const { rows } = await client.query<{
      holders: [string, string][];
      waiters: [string, number][];
      lease_live: boolean;
    }>(this.#sql.book, [now, key, taskId, token]);
    const row = rows[0];
    const waiters = (row?.waiters ?? []).map(([id, createdAt]) => ({
      taskId: id,
      createdAt: Number(createdAt),
    }));
    return { holders: row?.holders ?? [], waiters, leaseLive: row?.lease_live === true };
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
