/**
 * Fills a SQLite task store with `count` completed tasks, fast enough for ten million: the rows
 * come from one INSERT … SELECT over a recursive counter, so no JavaScript runs per row; the
 * secondary indexes are dropped for the load and rebuilt by sorting afterwards. Ids are 24
 * random hex characters, so the primary-key index is built by random inserts as a real store's
 * would be. The file ends in the store's own WAL mode with its schema version.
 */
import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import { SCHEMA_VERSION } from '../../src/stores/sqlite/schema.js';

const INSERT = `
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < @count)
INSERT INTO tasks (id, principal, tool, status, status_message, created_at, updated_at, ttl_ms,
  expires_at, poll_interval_ms, revision, attempt, generation, idempotency_key, arguments, result,
  error, input_requests, input_responses, meta)
SELECT lower(hex(randomblob(12))), 'anonymous', 'noop', 'completed', NULL, @now - @count + i,
  @now - @count + i + 1, NULL, NULL, 1, 2, 1, 'v2', NULL,
  '{"i":' || i || '}', '{"content":[{"type":"text","text":"task ' || i || '"}]}', NULL, '{}', '{}',
  '{}'
FROM n`;

export interface FilledStore {
  path: string;
  /** File size after a full checkpoint, divided by the rows. */
  bytesPerTask: number;
  seconds: number;
  /** Taken from an earlier run's file instead of filled now. */
  reused: boolean;
}

export async function fillSqlite(path: string, count: number): Promise<FilledStore> {
  const started = performance.now();
  await new SqliteTaskStore(path).close(); // the store's schema, version and pragmas
  const db = new Database(path);
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -1000000');
  const indexes = db
    .prepare<[], { name: string; sql: string }>(
      "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'tasks' AND sql IS NOT NULL",
    )
    .all();
  for (const index of indexes) db.exec(`DROP INDEX ${index.name}`);
  db.prepare(INSERT).run({ count, now: Date.now() });
  for (const index of indexes) db.exec(index.sql);
  db.pragma('journal_mode = WAL');
  db.close();
  return {
    path,
    bytesPerTask: statSync(path).size / count,
    seconds: (performance.now() - started) / 1000,
    reused: false,
  };
}

/** About `sample` ids of the filled table, each row equally likely wherever it lies, shuffled. */
export function sampleIds(path: string, count: number, sample: number): string[] {
  const db = new Database(path, { readonly: true });
  const byRowid = db.prepare<[number], { id: string }>('SELECT id FROM tasks WHERE rowid = ?');
  const ids = new Set<string>();
  while (ids.size < Math.min(sample, count)) {
    const row = byRowid.get(1 + Math.floor(Math.random() * count));
    if (row !== undefined) ids.add(row.id);
  }
  db.close();
  return [...ids];
}

/**
 * A filled file kept between runs in the OS temp folder (several GB for ten million rows, minutes
 * to fill): reused when its schema version and row count are the ones asked for, else refilled.
 */
export async function cachedFill(count: number): Promise<FilledStore> {
  const folder = join(tmpdir(), 'taskrail-bench-cache');
  mkdirSync(folder, { recursive: true });
  // `-nottl`: the rows keep no expiry, so a file cached days ago still serves every row (an
  // earlier fill gave them a day's TTL: a cache older than that answered not found).
  const path = join(folder, `tasks-${count}-v${SCHEMA_VERSION}-nottl.db`);
  if (existsSync(path) && rowsIn(path) === count) {
    return { path, bytesPerTask: statSync(path).size / count, seconds: 0, reused: true };
  }
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
  return fillSqlite(path, count);
}

function rowsIn(path: string): number {
  const db = new Database(path, { readonly: true });
  try {
    const version = db.pragma('user_version', { simple: true });
    if (version !== SCHEMA_VERSION) return -1;
    return db.prepare<[], { n: number }>('SELECT count(*) AS n FROM tasks').get()?.n ?? -1;
  } catch {
    return -1;
  } finally {
    db.close();
  }
}
