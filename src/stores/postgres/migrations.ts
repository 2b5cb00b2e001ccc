import type pg from 'pg';
import { TaskrailError } from '../../task/errors.js';

/**
 * Numbered migrations; `S` stands for the quoted schema name. Never edit a released migration:
 * add one. Times are milliseconds since the epoch as float8 (the runtime's records may carry
 * fractions; float8 keeps them exact up to 2^53).
 */
export const MIGRATIONS: readonly string[] = [
  // 1: tasks (with the lease in the row) and steps. `previous_status` and `lease_taken_over`
  // let one UPDATE return what it replaced (RETURNING sees only new values before PG 18).
  `
  CREATE TABLE S.tasks (
    id text PRIMARY KEY,
    principal text NOT NULL,
    tool text NOT NULL,
    status text NOT NULL,
    previous_status text,
    created_at float8 NOT NULL,
    expires_at float8,
    revision integer NOT NULL,
    idempotency_key text,
    fixed text NOT NULL,
    data text NOT NULL,
    lease_owner text,
    lease_token text,
    lease_expires_at float8,
    lease_taken_over boolean NOT NULL DEFAULT false
  );
  CREATE INDEX tasks_by_created ON S.tasks (created_at DESC, id DESC);
  CREATE INDEX tasks_by_principal ON S.tasks (principal, created_at DESC, id DESC);
  CREATE INDEX tasks_by_expiry ON S.tasks (expires_at) WHERE expires_at IS NOT NULL;
  CREATE INDEX tasks_working ON S.tasks (created_at) WHERE status = 'working';
  CREATE UNIQUE INDEX tasks_by_idempotency_key ON S.tasks (principal, idempotency_key)
    WHERE idempotency_key IS NOT NULL;

  CREATE TABLE S.steps (
    task_id text NOT NULL REFERENCES S.tasks (id) ON DELETE CASCADE,
    name text NOT NULL,
    value text NOT NULL,
    PRIMARY KEY (task_id, name)
  );

  CREATE TABLE S.fleet (
    member text PRIMARY KEY,
    info text NOT NULL,
    seen_at timestamptz NOT NULL
  );
  `,
  // 2: concurrency permits (held under a task's lease token) and the tasks waiting for one,
  // in creation order per key.
  `
  CREATE TABLE S.permits (
    key text NOT NULL,
    task_id text NOT NULL,
    token text NOT NULL,
    PRIMARY KEY (key, task_id)
  );
  CREATE TABLE S.permit_waiters (
    key text NOT NULL,
    created_at float8 NOT NULL,
    task_id text NOT NULL,
    PRIMARY KEY (key, created_at, task_id)
  );
  `,
  // 3: a task's texts (output, a big result's whole text or JSON) in chunks by start offset,
  // deleted with the task.
  `
  CREATE TABLE S.task_texts (
    task_id text NOT NULL REFERENCES S.tasks (id) ON DELETE CASCADE,
    kind text NOT NULL,
    end_at bigint NOT NULL,
    dropped bigint NOT NULL,
    PRIMARY KEY (task_id, kind)
  );
  CREATE TABLE S.text_chunks (
    task_id text NOT NULL REFERENCES S.tasks (id) ON DELETE CASCADE,
    kind text NOT NULL,
    start bigint NOT NULL,
    body text NOT NULL,
    PRIMARY KEY (task_id, kind, start)
  );
  `,
  // 4: each principal's unfinished tasks, counted for the per-principal cap in the creating
  // statement itself (statements.ts \`insert\` raises the count; these triggers lower it).
  `
  CREATE TABLE S.unfinished_counts (principal text PRIMARY KEY, n integer NOT NULL);
  INSERT INTO S.unfinished_counts (principal, n)
    SELECT principal, count(*) FROM S.tasks WHERE status IN ('working', 'input_required')
    GROUP BY principal;
  CREATE FUNCTION S.unfinished_task_gone() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    UPDATE S.unfinished_counts SET n = n - 1 WHERE principal = OLD.principal;
    RETURN NULL;
  END $$;
  CREATE TRIGGER unfinished_on_finish AFTER UPDATE OF status ON S.tasks FOR EACH ROW
    WHEN (OLD.status IN ('working', 'input_required')
      AND NEW.status NOT IN ('working', 'input_required'))
    EXECUTE FUNCTION S.unfinished_task_gone();
  CREATE TRIGGER unfinished_on_delete AFTER DELETE ON S.tasks FOR EACH ROW
    WHEN (OLD.status IN ('working', 'input_required'))
    EXECUTE FUNCTION S.unfinished_task_gone();
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** One lock id per schema (two-key form: a fixed class id, then the schema's hash). */
const LOCK_CLASS = 0x7461736b; // 'task'

/**
 * Creates the schema and applies missing migrations, each in its own transaction, while holding
 * a session advisory lock: two processes starting at once apply them once, the second waits.
 */
export async function migrate(client: pg.ClientBase, schema: string, where: string): Promise<void> {
  const s = quoteIdent(schema);
  await client.query('SELECT pg_advisory_lock($1, hashtext($2))', [LOCK_CLASS, schema]);
  try {
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${s}.schema_migrations ` +
        '(version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const { rows } = await client.query<{ version: number | null }>(
      `SELECT max(version) AS version FROM ${s}.schema_migrations`,
    );
    const current = rows[0]?.version ?? 0;
    if (current > SCHEMA_VERSION) {
      throw new TaskrailError(
        'STORE_UNAVAILABLE',
        `${where} has schema version ${current}, newer than this taskrail knows ` +
          `(${SCHEMA_VERSION}): upgrade taskrail, or use another ?schema=`,
      );
    }
    for (let version = current + 1; version <= SCHEMA_VERSION; version++) {
      await applyOne(client, s, version);
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1, hashtext($2))', [LOCK_CLASS, schema]);
  }
}

async function applyOne(client: pg.ClientBase, s: string, version: number): Promise<void> {
  const sql = (MIGRATIONS[version - 1] as string).replace(/\bS\./g, `${s}.`);
  await client.query('BEGIN');
  try {
    await client.query(sql);
    await client.query(`INSERT INTO ${s}.schema_migrations (version) VALUES ($1)`, [version]);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/** Schema names are checked against a strict pattern first; quoting keeps them literal anyway. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
