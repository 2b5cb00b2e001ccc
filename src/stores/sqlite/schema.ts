import type Database from 'better-sqlite3';
import { TaskrailError } from '../../task/errors.js';

/**
 * Numbered migrations, applied in order inside one IMMEDIATE transaction, so two processes
 * opening a fresh file at once do not both run them. Never edit a released migration; add one.
 */
const UNFINISHED = "('working', 'input_required')";

export const MIGRATIONS: readonly string[] = [
  // 1: tasks, leases, steps. Not STRICT: times and intervals may be fractional numbers, and
  // INTEGER affinity keeps those exact instead of refusing them.
  `
  CREATE TABLE tasks (
    id TEXT PRIMARY KEY,
    principal TEXT NOT NULL,
    tool TEXT NOT NULL,
    status TEXT NOT NULL,
    status_message TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    ttl_ms INTEGER,
    expires_at INTEGER,
    poll_interval_ms INTEGER NOT NULL,
    revision INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    generation TEXT NOT NULL,
    idempotency_key TEXT,
    arguments TEXT NOT NULL,
    result TEXT,
    error TEXT,
    input_requests TEXT NOT NULL,
    input_responses TEXT NOT NULL,
    meta TEXT NOT NULL
  );
  CREATE INDEX tasks_by_created ON tasks (created_at DESC, id DESC);
  CREATE INDEX tasks_by_principal ON tasks (principal, created_at DESC, id DESC);
  CREATE INDEX tasks_by_tool ON tasks (tool);
  CREATE INDEX tasks_by_status ON tasks (status);
  CREATE INDEX tasks_by_expiry ON tasks (expires_at) WHERE expires_at IS NOT NULL;
  CREATE UNIQUE INDEX tasks_by_idempotency_key ON tasks (principal, idempotency_key)
    WHERE idempotency_key IS NOT NULL;

  CREATE TABLE leases (
    task_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    token TEXT NOT NULL,
    expires_at INTEGER NOT NULL
  ) WITHOUT ROWID;

  CREATE TABLE steps (
    task_id TEXT NOT NULL,
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (task_id, name)
  ) WITHOUT ROWID;
  `,
  // 2: the lease moves into the task's row, so taking or dropping it rewrites no other b-tree
  // (a create with its lease, or a finish, was one page more each); the tool index, used only
  // by operator listings, goes (each index is a page written per insert).
  `
  ALTER TABLE tasks ADD COLUMN lease_owner TEXT;
  ALTER TABLE tasks ADD COLUMN lease_token TEXT;
  ALTER TABLE tasks ADD COLUMN lease_expires_at INTEGER;
  UPDATE tasks SET lease_owner = l.owner, lease_token = l.token, lease_expires_at = l.expires_at
    FROM leases AS l WHERE l.task_id = tasks.id;
  DROP TABLE leases;
  DROP INDEX tasks_by_tool;
  `,
  // 3: concurrency permits (held under a task's lease token) and the tasks waiting for one,
  // in creation order per key.
  `
  CREATE TABLE permits (
    key TEXT NOT NULL,
    task_id TEXT NOT NULL,
    token TEXT NOT NULL,
    PRIMARY KEY (key, task_id)
  ) WITHOUT ROWID;
  CREATE TABLE permit_waiters (
    key TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    task_id TEXT NOT NULL,
    PRIMARY KEY (key, created_at, task_id)
  ) WITHOUT ROWID;
  `,
  // 4: a task's texts (output, a big result's whole text or JSON), kept in chunks beside the
  // record: rowid tables, since a chunk may fill many pages.
  `
  CREATE TABLE task_texts (
    task_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    end_at INTEGER NOT NULL,
    dropped INTEGER NOT NULL,
    PRIMARY KEY (task_id, kind)
  ) WITHOUT ROWID;
  CREATE TABLE text_chunks (
    task_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    start INTEGER NOT NULL,
    body TEXT NOT NULL
  );
  CREATE UNIQUE INDEX text_chunks_by_start ON text_chunks (task_id, kind, start);
  `,
  // 5: the per-principal cap reads a principal's unfinished tasks on every create; a count kept
  // by triggers in the writing transaction makes that one row (a counted read cost O(n)).
  `
  CREATE TABLE unfinished_counts (principal TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
  INSERT INTO unfinished_counts (principal, n)
    SELECT principal, count(*) FROM tasks WHERE status IN ${UNFINISHED} GROUP BY principal;
  CREATE TRIGGER unfinished_on_insert AFTER INSERT ON tasks WHEN new.status IN ${UNFINISHED}
  BEGIN
    INSERT INTO unfinished_counts (principal, n) VALUES (new.principal, 1)
      ON CONFLICT (principal) DO UPDATE SET n = n + 1;
  END;
  CREATE TRIGGER unfinished_on_finish AFTER UPDATE OF status ON tasks
    WHEN old.status IN ${UNFINISHED} AND new.status NOT IN ${UNFINISHED}
  BEGIN
    UPDATE unfinished_counts SET n = n - 1 WHERE principal = old.principal;
  END;
  CREATE TRIGGER unfinished_on_delete AFTER DELETE ON tasks WHEN old.status IN ${UNFINISHED}
  BEGIN
    UPDATE unfinished_counts SET n = n - 1 WHERE principal = old.principal;
  END;
  `,
  // 6: the store's own writes keep that count, once per principal per write transaction
  // (unfinished.ts): the triggers wrote its row once per task created or finished.
  `
  DROP TRIGGER unfinished_on_insert;
  DROP TRIGGER unfinished_on_finish;
  DROP TRIGGER unfinished_on_delete;
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** The highest migration recorded in the file (0 for a new file). */
export function schemaVersion(db: Database.Database): number {
  const table = db
    .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
    .get();
  if (table === undefined) return 0;
  const row = db.prepare('SELECT MAX(version) AS version FROM schema_migrations').get() as {
    version: number | null;
  };
  return row.version ?? 0;
}

export function migrate(db: Database.Database, path: string, now: number): void {
  // Up to date (the common open): a read, no write transaction to wait for while another
  // process writes, and nothing left in the WAL.
  if (schemaVersion(db) === SCHEMA_VERSION) return;
  db.transaction(() => {
    db.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL) STRICT',
    );
    const current = schemaVersion(db);
    if (current > SCHEMA_VERSION) {
      throw new TaskrailError(
        'STORE_UNAVAILABLE',
        `task store ${path} has schema version ${current}, newer than this taskrail knows ` +
          `(${SCHEMA_VERSION}): upgrade taskrail, or point --store at another file`,
      );
    }
    const record = db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)');
    for (let version = current + 1; version <= SCHEMA_VERSION; version++) {
      db.exec(MIGRATIONS[version - 1] as string);
      record.run(version, now);
    }
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}
