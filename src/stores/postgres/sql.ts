/**
 * The store's statements for one schema. `$1` is always "now" in milliseconds: null (the
 * default) means the database's clock, `now()`; only tests pass their own fake clock. Every
 * expiry and lease is judged against it, never against the calling process's clock.
 */
const NOW = `COALESCE($1::float8, (extract(epoch FROM now()) * 1000)::float8)`;
const LIVE = `(expires_at IS NULL OR expires_at > ${NOW})`;
const TERMINAL = "('completed', 'failed', 'cancelled')";
const UNFINISHED = "('working', 'input_required')";

/** A NOTIFY payload: ids and statuses only, never arguments or results. */
function notify(channel: string, kind: string, fields: string): string {
  return `pg_notify('${channel}', json_build_object('o', $2::text, 'k', '${kind}', ${fields})::text)`;
}

export type Statements = ReturnType<typeof statementsFor>;

export function statementsFor(s: string, channel: string) {
  const t = `${s}.tasks`;
  const changed = notify(channel, 'w', "'id', id, 'p', previous_status, 'r', revision");
  // $1 now, $2 id, $3 owner, $4 token, $5 lease ms, $6 owner to take over from (or null),
  // $7 true to spare an expired lease still on record (`ClaimOptions.spareExpired`).
  const claim = `UPDATE ${t} SET lease_taken_over = lease_token IS NOT NULL,
      lease_owner = $3, lease_token = $4, lease_expires_at = ${NOW} + $5::float8
    WHERE id = $2 AND status = 'working' AND ${LIVE}
      AND (lease_expires_at IS NULL OR lease_owner = $6
        OR (lease_expires_at <= ${NOW} AND NOT ($7::boolean AND lease_token IS NOT NULL)))`;
  return {
    /**
     * $1 now, $2 origin, $3.. columns; lease: $11 owner, $12 token, $13 ms (null = none);
     * $16 the most unfinished tasks the principal may have (null = no cap). An unfinished
     * task raises its principal's count in the same statement, under the count row's lock, so
     * creates racing at the cap cannot pass it: no row back = refused, nothing written.
     */
    insert: `WITH place AS (
        INSERT INTO ${s}.unfinished_counts AS c (principal, n)
          SELECT $4, 1 WHERE $6::text IN ${UNFINISHED}
        ON CONFLICT (principal) DO UPDATE SET n = c.n + 1
          WHERE $16::int IS NULL OR c.n < $16::int
        RETURNING n),
      row AS (
        INSERT INTO ${t} (id, principal, tool, status, created_at, expires_at, revision,
          idempotency_key, fixed, data, lease_owner, lease_token, lease_expires_at)
        SELECT $3, $4, $5, $6, $7::float8, $8::float8, $9::int, $10, $14, $15, $11, $12,
          CASE WHEN $13::float8 IS NULL THEN NULL ELSE ${NOW} + $13::float8 END
        WHERE $6::text NOT IN ${UNFINISHED} OR EXISTS (SELECT 1 FROM place)
        RETURNING id, lease_expires_at)
      SELECT lease_expires_at, (SELECT n FROM place) AS place,
        ${notify(channel, 'c', "'id', id")} FROM row`,
    /** $1 now, $2 principal, $3 key. */
    selectByKey: `SELECT id, fixed, data, ${LIVE} AS live FROM ${t}
      WHERE principal = $2 AND idempotency_key = $3`,
    /** $1 now, $2 origin, $3 id: deletes the task only if it expired. */
    deleteExpired: `WITH gone AS (DELETE FROM ${t} WHERE id = $3 AND NOT ${LIVE} RETURNING id)
      SELECT id, ${notify(channel, 'd', "'id', id")} FROM gone`,
    /** $1 now, $2 id. */
    get: `SELECT fixed, data FROM ${t} WHERE id = $2 AND ${LIVE}`,
    /**
     * $1 now, $2 origin, $3 id, $4 expected revision, $5 status, $6 expires, $7 data,
     * $8 the writer's lease token (null = unfenced).
     */
    compareAndSet: `WITH row AS (
        UPDATE ${t} SET previous_status = status, status = $5, revision = $4 + 1,
          expires_at = $6, data = $7,
          lease_owner = CASE WHEN $5 = 'working' THEN lease_owner END,
          lease_token = CASE WHEN $5 = 'working' THEN lease_token END,
          lease_expires_at = CASE WHEN $5 = 'working' THEN lease_expires_at END
        WHERE id = $3 AND revision = $4 AND status NOT IN ${TERMINAL} AND ${LIVE}
          AND ($8::text IS NULL OR lease_token = $8::text)
        RETURNING id, fixed, previous_status, revision)
      SELECT fixed, previous_status, ${changed} FROM row`,
    /** $1 now, $2 id: what a lost compare-and-set reports, and whether it was fenced out. */
    casLost: `SELECT fixed, data, status, lease_token FROM ${t} WHERE id = $2 AND ${LIVE}`,
    /** Parameters as `claim` above. */
    claim: `${claim} RETURNING lease_expires_at, lease_taken_over`,
    /**
     * The claim of a caller about to run the task: the same write also returns the row and its
     * steps (a JSON object, null when none), so the runner needs no read after it. Step values
     * are stored as JSON text; `::json` keeps that text as written. Parameters as `claim`.
     */
    claimLoaded: `WITH claimed AS (${claim}
        RETURNING id, lease_expires_at, lease_taken_over, fixed, data)
      SELECT lease_expires_at, lease_taken_over, fixed, data,
        (SELECT json_object_agg(st.name, st.value::json) FROM ${s}.steps st
          WHERE st.task_id = claimed.id) AS steps
      FROM claimed`,
    /** $1 now, $2 id, $3 token, $4 lease ms. */
    renew: `WITH head AS (SELECT status FROM ${t} WHERE id = $2 AND ${LIVE}),
        renewed AS (UPDATE ${t} SET lease_expires_at = ${NOW} + $4::float8
          WHERE id = $2 AND lease_token = $3 AND ${LIVE} RETURNING 1)
      SELECT status, EXISTS (SELECT 1 FROM renewed) AS held FROM head`,
    /**
     * $1 now, $2 id, $3 token. A lease that already ran out is kept (expired) rather than
     * cleared: nobody knows that run ended cleanly, so the next claim must count it.
     */
    release: `UPDATE ${t} SET
          lease_owner = CASE WHEN lease_expires_at <= ${NOW} THEN lease_owner END,
          lease_token = CASE WHEN lease_expires_at <= ${NOW} THEN lease_token END,
          lease_expires_at = CASE WHEN lease_expires_at <= ${NOW} THEN 0 END
        WHERE id = $2 AND lease_token = $3`,
    /** $1 id, $2 token. Keeps the token, so the next claim counts as an interruption. */
    abandon: `UPDATE ${t} SET lease_expires_at = 0 WHERE id = $1 AND lease_token = $2`,
    /**
     * $1 now, $2 id, $3 token, $4 wait ms. A durable wait: no holder and no token (the claim
     * after it is no interruption), runnable once the database's clock reaches the wake time.
     * Only a live lease is turned into a wait: one that ran out stays as evidence.
     */
    releaseUntil: `UPDATE ${t} SET lease_owner = '', lease_token = NULL,
        lease_expires_at = ${NOW} + $4::float8
      WHERE id = $2 AND lease_token = $3 AND status = 'working' AND ${LIVE}
        AND lease_expires_at > ${NOW}
      RETURNING lease_expires_at`,
    /** $1 now, $2 limit. Round robin across principals (each one's oldest first): fair share. */
    runnable: `SELECT id FROM ${t} WHERE status = 'working' AND ${LIVE}
        AND (lease_expires_at IS NULL OR lease_expires_at <= ${NOW})
      ORDER BY ROW_NUMBER() OVER (PARTITION BY principal ORDER BY created_at, id), created_at
      LIMIT $2`,
    /** $1 principal, $2 limit: the count kept by `insert` and migration 4's triggers. */
    countUnfinished: `SELECT LEAST(n, $2::int) AS n FROM ${s}.unfinished_counts
      WHERE principal = $1`,
    /** $1 now, $2 limit. */
    leased: `SELECT id, lease_owner AS owner FROM ${t} WHERE status = 'working' AND ${LIVE}
        AND lease_expires_at > ${NOW} AND lease_token IS NOT NULL
      ORDER BY lease_expires_at LIMIT $2`,
    /**
     * $1 now, $2 id, $3 name, $4 value, $5 the writer's lease token (null = unfenced). No row:
     * the task is absent; saved false: fenced out. FOR SHARE holds off a claim (which
     * changes the token) until the step is in, so the check and the insert are one step.
     */
    saveStep: `WITH head AS (SELECT id, lease_token FROM ${t} WHERE id = $2 AND ${LIVE} FOR SHARE),
        saved AS (INSERT INTO ${s}.steps (task_id, name, value)
          SELECT id, $3, $4 FROM head WHERE $5::text IS NULL OR lease_token = $5::text
          ON CONFLICT (task_id, name) DO UPDATE SET value = excluded.value
          RETURNING 1)
      SELECT EXISTS (SELECT 1 FROM saved) AS saved FROM head`,
    /** $1 now, $2 id. */
    loadSteps: `SELECT st.name, st.value FROM ${s}.steps st JOIN ${t} ON ${t}.id = st.task_id
      WHERE st.task_id = $2 AND ${LIVE}`,
    /** $1 now, $2 origin, $3 limit. SKIP LOCKED: two sweepers share the work, never wait. */
    sweep: `WITH gone AS (DELETE FROM ${t} WHERE id IN (
          SELECT id FROM ${t} WHERE expires_at <= ${NOW}
          ORDER BY expires_at LIMIT $3 FOR UPDATE SKIP LOCKED)
        RETURNING id)
      SELECT id, ${notify(channel, 'd', "'id', id")} FROM gone`,
  };
}

export interface ListShape {
  principal: boolean;
  tool: boolean;
  statuses: boolean;
  cursor: boolean;
}

/** One `list` query; parameters in order: now, limit, then each filter present, in this order. */
export function listSql(s: string, shape: ListShape): string {
  const where = [LIVE];
  let n = 2;
  if (shape.principal) where.push(`principal = $${++n}`);
  if (shape.tool) where.push(`tool = $${++n}`);
  if (shape.statuses) where.push(`status = ANY($${++n}::text[])`);
  if (shape.cursor) {
    const at = ++n;
    const id = ++n;
    where.push(`(created_at < $${at} OR (created_at = $${at} AND id < $${id}))`);
  }
  return (
    `SELECT fixed, data FROM ${s}.tasks WHERE ${where.join(' AND ')} ` +
    'ORDER BY created_at DESC, id DESC LIMIT $2'
  );
}
