import type Database from 'better-sqlite3';
import {
  EXPIRY_UPDATE_COLUMNS,
  HEAD_COLUMNS,
  TASK_COLUMNS,
  TASK_PARAMS,
  UPDATE_COLUMNS,
} from './rows.js';

const VISIBLE = '(expires_at IS NULL OR expires_at > @now)';
const TERMINAL = "('completed', 'failed', 'cancelled')";

const assignments = (columns: readonly string[]) =>
  columns.map((column) => `${column} = @${column}`).join(', ');
const ASSIGNMENTS = assignments(UPDATE_COLUMNS);
const WITH_EXPIRY = assignments([...UPDATE_COLUMNS, ...EXPIRY_UPDATE_COLUMNS]);
const CAS_WHERE = `WHERE id = @id AND revision = @expected_revision AND status NOT IN ${TERMINAL}`;
// A parked or finished task holds no lease: a write that leaves `working` drops it.
const KEEP_LEASE_IF_WORKING = ['lease_owner', 'lease_token', 'lease_expires_at']
  .map((column) => `${column} = CASE WHEN @status = 'working' THEN ${column} END`)
  .join(', ');
const LEASE_FREE = '(lease_expires_at IS NULL OR lease_expires_at <= @now)';

/** Every fixed statement the store runs. */
const STATEMENT_SQL = {
  insertTask: `INSERT INTO tasks (${TASK_COLUMNS}) VALUES (${TASK_PARAMS})`,
  // A create that takes the lease at once: one statement, not an insert and then an update.
  insertLeasedTask:
    `INSERT INTO tasks (${TASK_COLUMNS}, lease_owner, lease_token, lease_expires_at) ` +
    `VALUES (${TASK_PARAMS}, @lease_owner, @lease_token, @lease_expires_at)`,
  selectTask: `SELECT ${TASK_COLUMNS} FROM tasks WHERE id = ?`,
  selectVisibleTask: `SELECT ${TASK_COLUMNS} FROM tasks WHERE id = ? AND (expires_at IS NULL OR expires_at > ?)`,
  selectHead: `SELECT ${HEAD_COLUMNS} FROM tasks WHERE id = ?`,
  selectVisibleStatus: `SELECT status FROM tasks WHERE id = @id AND ${VISIBLE}`,
  selectVisibleLease: `SELECT lease_token FROM tasks WHERE id = @id AND ${VISIBLE}`,
  selectByIdempotencyKey: `SELECT ${TASK_COLUMNS} FROM tasks WHERE principal = ? AND idempotency_key = ?`,
  updateTask: `UPDATE tasks SET ${ASSIGNMENTS}, ${KEEP_LEASE_IF_WORKING} ${CAS_WHERE}`,
  updateTaskAndExpiry: `UPDATE tasks SET ${WITH_EXPIRY}, ${KEEP_LEASE_IF_WORKING} ${CAS_WHERE}`,
  // What the unfinished count needs (unfinished.ts).
  deleteTask: 'DELETE FROM tasks WHERE id = ? RETURNING principal, status',
  selectExpired:
    'SELECT id FROM tasks WHERE expires_at IS NOT NULL AND expires_at <= ? ' +
    'ORDER BY expires_at LIMIT ?',
  selectClaimHead:
    'SELECT status, expires_at, lease_owner, lease_token, lease_expires_at FROM tasks WHERE id = ?',
  selectClaimRow: `SELECT ${TASK_COLUMNS}, lease_owner, lease_token, lease_expires_at FROM tasks WHERE id = ?`,
  setLease: 'UPDATE tasks SET lease_owner = ?, lease_token = ?, lease_expires_at = ? WHERE id = ?',
  renewLease: 'UPDATE tasks SET lease_expires_at = ? WHERE id = ? AND lease_token = ?',
  // A lease that already ran out is kept (expired) instead: see `abandonLease`.
  releaseLease: `UPDATE tasks SET
       lease_owner = CASE WHEN lease_expires_at > @now THEN NULL ELSE lease_owner END,
       lease_token = CASE WHEN lease_expires_at > @now THEN NULL ELSE lease_token END,
       lease_expires_at = CASE WHEN lease_expires_at > @now THEN NULL ELSE 0 END
     WHERE id = @id AND lease_token = @token`,
  // The lease stays, expired: the next claim sees an interrupted run.
  abandonLease: 'UPDATE tasks SET lease_expires_at = 0 WHERE id = @id AND lease_token = @token',
  // A durable wait: no holder, no token (the claim after it is no interruption), and runnable
  // only once the store's clock reaches the wake time.
  waitLease:
    "UPDATE tasks SET lease_owner = '', lease_token = NULL, lease_expires_at = @wake_at " +
    "WHERE id = @id AND lease_token = @token AND status = 'working' AND lease_expires_at > @now",
  selectLeased: `SELECT id, lease_owner AS owner FROM tasks
       WHERE status = 'working' AND ${VISIBLE} AND lease_expires_at > @now
         AND lease_token IS NOT NULL
       ORDER BY created_at LIMIT @limit`,
  // Durable waits (see waitLease), for the alarm that wakes them (wait-alarm.ts): the first
  // wake time after @after, and the waits that came due after @since, up to @now; unclaimed.
  // Expired tasks count here (a sweep deletes them; a wake-up of one finds nothing to run).
  selectNextWake: `SELECT MIN(lease_expires_at) AS at FROM tasks
       WHERE status = 'working' AND lease_owner = '' AND lease_token IS NULL
         AND lease_expires_at > @after`,
  selectDueWaits: `SELECT id, lease_expires_at AS at FROM tasks
       WHERE status = 'working' AND lease_owner = '' AND lease_token IS NULL
         AND lease_expires_at > @since AND lease_expires_at <= @now AND ${VISIBLE}
       ORDER BY lease_expires_at LIMIT @limit`,
  // Round robin across principals (each one's oldest first): fair share for recovered work.
  selectRunnable: `SELECT id FROM tasks
       WHERE status = 'working' AND ${VISIBLE} AND ${LEASE_FREE}
       ORDER BY ROW_NUMBER() OVER (PARTITION BY principal ORDER BY created_at, id), created_at
       LIMIT @limit`,
  // Kept by the store's writes (unfinished.ts); expired tasks count until they are swept.
  countUnfinished: 'SELECT min(n, @limit) AS n FROM unfinished_counts WHERE principal = @principal',
  upsertStep: 'INSERT OR REPLACE INTO steps (task_id, name, value) VALUES (?, ?, ?)',
  selectSteps: 'SELECT name, value FROM steps WHERE task_id = ?',
  deleteSteps: 'DELETE FROM steps WHERE task_id = ?',
} as const;

export type Statements = Record<keyof typeof STATEMENT_SQL, Database.Statement>;

/** Statements whose rows come back as arrays of values (see rawRowToRecord). */
const RAW = new Set<string>(['selectVisibleTask', 'selectHead', 'selectClaimRow']);

/** Prepares every fixed statement once per connection. */
export function prepareStatements(db: Database.Database): Statements {
  const entries = Object.entries(STATEMENT_SQL).map(([name, sql]) => {
    const statement = db.prepare(sql);
    return [name, RAW.has(name) ? statement.raw(true) : statement];
  });
  return Object.fromEntries(entries) as Statements;
}

export interface ListFilters {
  principal: boolean;
  tool: boolean;
  statuses: boolean;
  cursor: boolean;
}

/** The SQL of one `list` shape; the store caches one prepared statement per shape. */
export function listSql(filters: ListFilters): string {
  const where = [VISIBLE];
  if (filters.principal) where.push('principal = @principal');
  if (filters.tool) where.push('tool = @tool');
  if (filters.statuses) where.push('status IN (SELECT value FROM json_each(@statuses))');
  if (filters.cursor) {
    where.push(
      '(created_at < @cursor_created_at OR (created_at = @cursor_created_at AND id < @cursor_id))',
    );
  }
  return (
    `SELECT ${TASK_COLUMNS} FROM tasks WHERE ${where.join(' AND ')} ` +
    'ORDER BY created_at DESC, id DESC LIMIT @limit'
  );
}
