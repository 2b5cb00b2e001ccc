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

  /** Two round trips: the lock and the key's book, then the write and the commit. */
  acquire(request: PermitRequest): Promise<PermitOutcome> {
    assertPermitRequest(request);
    const { key, taskId, token } = request;
    return this.#transaction<PermitOutcome>(key, async (batch) => {
      const [read] = await batch.locked([[this.#sql.book, [NOW, key, taskId, token]]]);
      const book = bookOf(read);
      if (!book.leaseLive) return { outcome: { granted: false, wake: [] }, writes: [] };
      if (book.holders.some(([id, held]) => id === taskId && held === token)) {
        const writes: Statement[] = [[this.#sql.unwait, [key, taskId]]];
        return { outcome: { granted: true, wake: [] }, writes };
      }
      const held = book.holders.filter(([id]) => id !== taskId).length;
      const outcome = decidePermit({ held, waiters: book.waiters }, request);
      if (outcome.granted) return { outcome, writes: [[this.#sql.hold, [key, taskId, token]]] };
      const giveBack = request.releaseOnRefusal === true;
      const wait: Param[] = [key, taskId, request.createdAt, NOW, token, giveBack];
      return { outcome, writes: [[this.#sql.wait, wait]] };
    });
  }

  /** One round trip: the lock, the release, the key's book and the commit together. */
  release(key: string, limit: number, taskId: string, token: string): Promise<string[]> {
    assertPermitLimit(limit);
    return this.#transaction<string[]>(key, async (batch) => {
      const [, read] = await batch.locked(
        [
          [this.#sql.unhold, [key, taskId, token]],
          [this.#sql.book, [NOW, key, taskId, token]],
        ],
        true,
      );
      const book = bookOf(read);
      return { outcome: wakeable(book.waiters, limit - book.holders.length), writes: [] };
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

  /**
   * One transaction holding the key's advisory lock, in as few round trips as its statements
   * allow: `work` reads through `batch.locked` (sent with BEGIN and the lock), and its writes
   * go with the COMMIT. A multi-statement query takes no bind parameters, so values are inlined
   * as escaped literals.
   */
  async #transaction<T>(
    key: string,
    work: (batch: LockedBatch) => Promise<{ outcome: T; writes: Statement[] }>,
  ): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw storeError(error, this.description);
    }
    const now = this.clock === undefined ? NOW_SQL : String(this.clock());
    const text = (statements: Statement[]) =>
      statements.map(([sql, params]) => inline(client, sql, params, now)).join(';\n');
    const lock: Statement = [LOCK_SQL, [`${this.schema}:${key}`]];
    let committed = false;
    const batch: LockedBatch = {
      locked: async (statements, commit = false) => {
        const tail = commit ? [...statements, COMMIT] : statements;
        const results = await multi(client, text([BEGIN, lock, ...tail]));
        committed = commit;
        return results.slice(2, 2 + statements.length);
      },
    };
    try {
      const { outcome, writes } = await work(batch);
      if (!committed) await multi(client, text([...writes, COMMIT]));
      return outcome;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw storeError(error, this.description);
    } finally {
      client.release();
    }
  }
}

type Param = string | number | boolean | null | typeof NOW;
type Statement = readonly [sql: string, params: readonly Param[]];

interface LockedBatch {
  /** Sends BEGIN, the key's lock and `statements` (with COMMIT when `commit`): their results. */
  locked(statements: Statement[], commit?: boolean): Promise<pg.QueryResult[]>;
}

/** The store's clock in a statement: the fake clock's value, or the database's. */
const NOW = Symbol('now');
const NOW_SQL = '(extract(epoch FROM now()) * 1000)::float8';
const LOCK_SQL = `SELECT pg_advisory_xact_lock(${PERMIT_LOCK_CLASS}, hashtext($1))`;
const BEGIN: Statement = ['BEGIN', []];
const COMMIT: Statement = ['COMMIT', []];

function inline(client: pg.PoolClient, sql: string, params: readonly Param[], now: string) {
  return sql.replace(/\$(\d+)/g, (_, n: string) => {
    const value = params[Number(n) - 1];
    if (value === NOW) return `(${now})`;
    if (value === null || value === undefined) return 'NULL';
    if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) throw new TypeError(`not a finite number: ${value}`);
      return `(${value})`;
    }
    return client.escapeLiteral(value);
  });
}

async function multi(client: pg.PoolClient, text: string): Promise<pg.QueryResult[]> {
  const results = (await client.query(text)) as unknown as pg.QueryResult | pg.QueryResult[];
  return Array.isArray(results) ? results : [results];
}

function bookOf(result: pg.QueryResult | undefined): {
  holders: [string, string][];
  waiters: PermitWaiter[];
  leaseLive: boolean;
} {
  const row = result?.rows[0] as
    { holders: [string, string][]; waiters: [string, number][]; lease_live: boolean } | undefined;
  const waiters = (row?.waiters ?? []).map(([id, createdAt]) => ({
    taskId: id,
    createdAt: Number(createdAt),
  }));
  return { holders: row?.holders ?? [], waiters, leaseLive: row?.lease_live === true };
}
