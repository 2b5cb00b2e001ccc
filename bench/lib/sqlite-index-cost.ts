/**
 * What each index of the SQLite schema costs a create: per task, an INSERT (with its lease, as
 * a create that starts at once) and the no-op's completion UPDATE, in batches of 16 that share
 * a commit (as group commit does at 32 connections), on the real schema with one index dropped
 * or changed at a time. Prints CPU µs per task (median of 7 interleaved rounds of 8,000 tasks,
 * after 20,000 to fill and warm each file). Not a bench section: run it by hand,
 *   node .build/bench/lib/sqlite-index-cost.js [NORMAL|FULL]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { MIGRATIONS } from '../../src/stores/sqlite/schema.js';
import { newTaskId } from '../../src/task/ids.js';

const VARIANTS: Record<string, string[]> = {
  all: [],
  noCreated: ['DROP INDEX tasks_by_created'],
  noPrincipal: ['DROP INDEX tasks_by_principal'],
  noStatus: ['DROP INDEX tasks_by_status'],
  statusLiveOnly: [
    'DROP INDEX tasks_by_status',
    "CREATE INDEX tasks_by_status ON tasks (status) WHERE status IN ('working', 'input_required')",
  ],
  workingByCreated: [
    'DROP INDEX tasks_by_status',
    "CREATE INDEX tasks_working ON tasks (created_at) WHERE status = 'working'",
  ],
  noExpiry: ['DROP INDEX tasks_by_expiry'],
  none: ['created', 'principal', 'status', 'expiry'].map((name) => `DROP INDEX tasks_by_${name}`),
};
const META = JSON.stringify({
  clientCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } },
});
const BATCH = 16;
const dir = mkdtempSync(join(tmpdir(), 'taskrail-index-cost-'));
const synchronous = process.argv[2] === 'FULL' ? 'FULL' : 'NORMAL';

function open(name: string, changes: string[]) {
  const db = new Database(join(dir, `${name}.db`));
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${synchronous}`);
  for (const migration of MIGRATIONS) db.exec(migration);
  for (const change of changes) db.exec(change);
  const insert = db.prepare(
    'INSERT INTO tasks (id, principal, tool, status, created_at, updated_at, ttl_ms, ' +
      'expires_at, poll_interval_ms, revision, attempt, generation, arguments, ' +
      'input_requests, input_responses, meta, lease_owner, lease_token, lease_expires_at) ' +
      'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const complete = db.prepare(
    'UPDATE tasks SET status = ?, updated_at = ?, revision = ?, result = ?, lease_owner = NULL, ' +
      "lease_token = NULL, lease_expires_at = NULL WHERE id = ? AND revision = ? AND status NOT IN ('completed', 'failed', 'cancelled')",
  );
  return { db, insert, complete };
}
type Variant = ReturnType<typeof open>;

function round(v: Variant, tasks: number): number {
  const started = process.cpuUsage();
  for (let b = 0; b < tasks / BATCH; b++) {
    const now = Date.now();
    const ids = Array.from({ length: BATCH }, () => newTaskId());
    v.db.exec('BEGIN IMMEDIATE');
    for (const id of ids) {
      const times = [now, now, 3_600_000, now + 3_600_000, 1000, 1, 1];
      const texts = ['v2', '{}', '{}', '{}', META];
      v.insert.run(id, 'anonymous', 'noop', 'working', ...times, ...texts, 'w', id, now + 60_000);
    }
    v.db.exec('COMMIT');
    v.db.exec('BEGIN IMMEDIATE');
    for (const id of ids) v.complete.run('completed', now + 1, 2, '{"content":[]}', id, 1);
    v.db.exec('COMMIT');
  }
  const used = process.cpuUsage(started);
  return (used.user + used.system) / tasks;
}

const names = Object.keys(VARIANTS);
const variants = new Map(names.map((name) => [name, open(name, VARIANTS[name] ?? [])]));
for (const v of variants.values()) round(v, 20_000);
const cpu = new Map(names.map((name) => [name, [] as number[]]));
for (let r = 0; r < 7; r++) for (const [name, v] of variants) cpu.get(name)?.push(round(v, 8000));
for (const [name, values] of cpu) {
  const sorted = values.sort((a, b) => a - b);
  console.log(
    `${name.padEnd(17)} ${(sorted[3] ?? 0).toFixed(2)} µs/task (min ${(sorted[0] ?? 0).toFixed(2)})`,
  );
}
for (const v of variants.values()) v.db.close();
rmSync(dir, { recursive: true, force: true });
