import { chmodSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import type Database from 'better-sqlite3';
import { backoffDelayMs } from '../task/backoff.js';
import type { JsonRpcErrorObject } from '../task/errors.js';
import type { OutcomeKind } from './outcome.js';

export { isFinal, MemoryLedger } from './ledger-port.js';
import type {
  LedgerEntry,
  LedgerStatus,
  Observation,
  PendingCall,
  Settlement,
  TaskLedger,
} from './ledger-port.js';
import { WIRE_2026_VERSION } from '../protocol/constants.js';

export type { LedgerEntry, LedgerStatus, Observation, PendingCall, Settlement, TaskLedger };

/**
 * The host's durable memory of its tasks: one SQLite file under `$TASKRAIL_HOME` (default
 * `~/.taskrail/ledger.db`). A task is written here as soon as its CreateTaskResult arrives and
 * before the first `tasks/get`, so a crash at any later point leaves enough to reattach.
 * WAL + busy_timeout let several CLI processes share the file.
 */

const SCHEMA = `
CREATE TABLE IF NOT EXISTS tasks (
  id TEXT PRIMARY KEY,
  server TEXT NOT NULL,
  tool TEXT NOT NULL,
  arguments TEXT NOT NULL,
  status TEXT NOT NULL,
  status_message TEXT,
  poll_interval_ms INTEGER NOT NULL,
  next_poll_at INTEGER NOT NULL,
  ttl_ms INTEGER,
  input_requests TEXT,
  answered_keys TEXT NOT NULL DEFAULT '[]',
  outcome TEXT,
  result TEXT,
  error TEXT,
  output_schema TEXT,
  bearer TEXT,
  owner_pid INTEGER,
  protocol_version TEXT NOT NULL DEFAULT '2026-07-28',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
-- No query of the ledger can use an index on status (they ask for NOT IN the final ones, which
-- scans), while every record and settle would write one: ledgers from before lose it.
DROP INDEX IF EXISTS tasks_by_status;
CREATE TABLE IF NOT EXISTS pending_calls (
  key TEXT PRIMARY KEY,
  server TEXT NOT NULL,
  tool TEXT NOT NULL,
  arguments TEXT NOT NULL,
  bearer TEXT,
  created_at INTEGER NOT NULL
);
`;

/** The wire an entry without `protocolVersion` stands for (ledgers from before the column). */
const WIRE_2026 = WIRE_2026_VERSION;

/**
 * Columns added after the first release, added to an older ledger file when it is opened (in
 * the opening transaction, so two processes opening it at once do not both try).
 */
const ADDED_COLUMNS: ReadonlyArray<readonly [name: string, definition: string]> = [
  ['protocol_version', `TEXT NOT NULL DEFAULT '${WIRE_2026}'`],
];

function addMissingColumns(db: Database.Database): void {
  const present = new Set(
    (db.pragma('table_info(tasks)') as Array<{ name: string }>).map((column) => column.name),
  );
  for (const [name, definition] of ADDED_COLUMNS) {
    if (!present.has(name)) db.exec(`ALTER TABLE tasks ADD COLUMN ${name} ${definition}`);
  }
}

/** How long opening the file may keep meeting another process's lock before it fails. */
const OPEN_BUDGET_MS = 10_000;

/**
 * Opens the ledger file, set up for several processes: the busy time-out first (so every later
 * statement waits for another process's lock), WAL only when the file is not WAL yet (switching
 * takes an exclusive lock), the schema in an immediate transaction. Several CLI processes
 * opening one new ledger at once can still meet a lock SQLite reports at once as
 * SQLITE_BUSY/LOCKED (CI saw "database is locked" from one of ten); the whole open is retried
 * then, with a short jittered backoff, for up to OPEN_BUDGET_MS.
 */
function openLedgerFile(path: string): Database.Database {
  // Loaded on first use, so hosts with a memory ledger never need the native driver.
  const Driver = createRequire(import.meta.url)('better-sqlite3') as typeof Database;
  const deadline = Date.now() + OPEN_BUDGET_MS;
  for (let retry = 1; ; retry += 1) {
    const db = new Driver(path);
    try {
      db.pragma('busy_timeout = 5000');
      if (db.pragma('journal_mode', { simple: true }) !== 'wal') db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      db.transaction(() => {
        db.exec(SCHEMA);
        addMissingColumns(db);
      }).immediate();
      return db;
    } catch (error) {
      db.close();
      if (!isLockedNow(error) || Date.now() >= deadline) throw error;
      sleepSync(backoffDelayMs({ backoffMs: 10, maxBackoffMs: 250, jitter: true }, retry));
    }
  }
}

function isLockedNow(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^SQLITE_(BUSY|LOCKED)/.test(code);
}

/** The open is synchronous (as better-sqlite3 is), so its wait is too. */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

const NOT_FINAL = `status NOT IN ('completed','failed','cancelled','lost')`;

type Row = Record<string, unknown>;

/** `~/.taskrail`. The CLI honours `$TASKRAIL_HOME` (see `clientOptionsFromEnv`); the library reads no environment. */
export function defaultHome(env: NodeJS.ProcessEnv = process.env): string {
  const home = env['TASKRAIL_HOME'];
  return home === undefined || home.trim() === '' ? join(homedir(), '.taskrail') : home;
}

export class Ledger implements TaskLedger {
  readonly path: string;
  readonly #db: Database.Database;
  /** Prepared once per SQL text: preparing costs more than the small reads and writes here. */
  readonly #statements = new Map<string, Database.Statement>();
  readonly #now: () => number;

  private constructor(path: string, now: () => number) {
    this.path = path;
    this.#now = now;
    this.#db = openLedgerFile(path);
  }

  static open(home: string = defaultHome(), now: () => number = Date.now): Ledger {
    mkdirSync(home, { recursive: true, mode: 0o700 });
    const path = join(home, 'ledger.db');
    const ledger = new Ledger(path, now);
    chmodSync(path, 0o600);
    return ledger;
  }

  /** Records a new task; a second record of the same id (a retried create) keeps the first. */
  record(entry: Omit<LedgerEntry, 'createdAt' | 'updatedAt' | 'answeredKeys'>): LedgerEntry {
    const now = this.#now();
    // The row as written: what a read of it would give back, without the read.
    const row: Row = {
      id: entry.id,
      server: entry.server,
      tool: entry.tool,
      arguments: JSON.stringify(entry.arguments),
      status: entry.status,
      status_message: entry.statusMessage ?? null,
      poll_interval_ms: entry.pollIntervalMs,
      next_poll_at: entry.nextPollAt,
      ttl_ms: entry.ttlMs,
      output_schema: entry.outputSchema === undefined ? null : JSON.stringify(entry.outputSchema),
      bearer: entry.bearer ?? null,
      owner_pid: entry.ownerPid ?? null,
      protocol_version: entry.protocolVersion ?? WIRE_2026,
      answered_keys: '[]',
      input_requests: null,
      outcome: null,
      result: null,
      error: null,
      created_at: now,
      updated_at: now,
    };
    const { changes } = this.#sql(
      `INSERT OR IGNORE INTO tasks (id, server, tool, arguments, status, status_message, poll_interval_ms,
          next_poll_at, ttl_ms, output_schema, bearer, owner_pid, protocol_version, created_at, updated_at)
         VALUES (@id, @server, @tool, @arguments, @status, @status_message, @poll_interval_ms,
          @next_poll_at, @ttl_ms, @output_schema, @bearer, @owner_pid, @protocol_version, @created_at,
          @updated_at)`,
    ).run(row);
    // Read back only when the id was there already: the first record is the one that stands.
    return changes === 0 ? this.require(entry.id) : fromRow(row);
  }

  get(id: string): LedgerEntry | undefined {
    const row = this.#sql('SELECT * FROM tasks WHERE id = ?').get(id) as Row | undefined;
    return row === undefined ? undefined : fromRow(row);
  }

  require(id: string): LedgerEntry {
    const entry = this.get(id);
    if (entry === undefined) throw new Error(`no task '${id}' in the ledger ${this.path}`);
    return entry;
  }

  list(): LedgerEntry[] {
    const rows = this.#sql('SELECT * FROM tasks ORDER BY created_at DESC, id').all() as Row[];
    return rows.map(fromRow);
  }

  unfinished(): LedgerEntry[] {
    const rows = this.#sql(
      `SELECT * FROM tasks WHERE ${NOT_FINAL} ORDER BY created_at`,
    ).all() as Row[];
    return rows.map(fromRow);
  }

  /** Stores what the last `tasks/get` said. A final row never changes again. */
  observe(id: string, o: Observation): void {
    this.#sql(
      `UPDATE tasks SET status = @status, status_message = @statusMessage, poll_interval_ms = @pollIntervalMs,
          next_poll_at = @nextPollAt, ttl_ms = COALESCE(@ttlMs, ttl_ms), input_requests = @inputRequests,
          updated_at = @now WHERE id = @id AND ${NOT_FINAL}`,
    ).run({
      id,
      status: o.status,
      statusMessage: o.statusMessage ?? null,
      pollIntervalMs: o.pollIntervalMs,
      nextPollAt: o.nextPollAt,
      ttlMs: o.ttlMs ?? null,
      inputRequests: o.inputRequests === undefined ? null : JSON.stringify(o.inputRequests),
      now: this.#now(),
    });
  }

  /** The terminal state replaces the last progress line: a completed task's is cleared. */
  settle(id: string, s: Settlement): void {
    this.#sql(
      `UPDATE tasks SET status = @status, outcome = @outcome, status_message = @statusMessage,
          result = @result, error = @error, input_requests = NULL, owner_pid = NULL, updated_at = @now
         WHERE id = @id AND ${NOT_FINAL}`,
    ).run({
      id,
      status: s.status,
      outcome: s.outcome,
      statusMessage: s.statusMessage ?? null,
      result: s.result === undefined ? null : JSON.stringify(s.result),
      error: s.error === undefined ? null : JSON.stringify(s.error),
      now: this.#now(),
    });
  }

  /** Adds answered input keys in one transaction, so two processes cannot drop each other's. */
  markAnswered(id: string, keys: readonly string[]): void {
    const tx = this.#db.transaction(() => {
      const row = this.#sql('SELECT answered_keys FROM tasks WHERE id = ?').get(id) as
        Row | undefined;
      if (row === undefined) return;
      const answered = new Set(JSON.parse(String(row.answered_keys)) as string[]);
      for (const key of keys) answered.add(key);
      this.#sql('UPDATE tasks SET answered_keys = ?, updated_at = ? WHERE id = ?').run(
        JSON.stringify([...answered]),
        this.#now(),
        id,
      );
    });
    tx.immediate();
  }

  setOwner(id: string, pid: number | undefined): void {
    this.#sql('UPDATE tasks SET owner_pid = ? WHERE id = ?').run(pid ?? null, id);
  }

  recordPending(call: Omit<PendingCall, 'createdAt'>): void {
    this.#sql(
      `INSERT OR IGNORE INTO pending_calls (key, server, tool, arguments, bearer, created_at)
       VALUES (?, ?, ?, ?, ?, ?)`,
    ).run(
      call.key,
      call.server,
      call.tool,
      JSON.stringify(call.arguments),
      call.bearer ?? null,
      this.#now(),
    );
  }

  dropPending(key: string): void {
    this.#sql('DELETE FROM pending_calls WHERE key = ?').run(key);
  }

  pending(server: string): PendingCall[] {
    const rows = this.#sql(
      'SELECT * FROM pending_calls WHERE server = ? ORDER BY created_at, key',
    ).all(server) as Row[];
    return rows.map((row) => ({
      key: String(row.key),
      server: String(row.server),
      tool: String(row.tool),
      arguments: JSON.parse(String(row.arguments)) as Record<string, unknown>,
      ...(row.bearer === null ? {} : { bearer: String(row.bearer) }),
      createdAt: Number(row.created_at),
    }));
  }

  close(): void {
    if (this.#db.open) this.#db.close();
  }

  #sql(sql: string): Database.Statement {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }
}

function fromRow(row: Row): LedgerEntry {
  const entry: LedgerEntry = {
    id: String(row.id),
    server: String(row.server),
    tool: String(row.tool),
    arguments: JSON.parse(String(row.arguments)) as Record<string, unknown>,
    status: String(row.status) as LedgerStatus,
    pollIntervalMs: Number(row.poll_interval_ms),
    nextPollAt: Number(row.next_poll_at),
    ttlMs: row.ttl_ms === null ? null : Number(row.ttl_ms),
    answeredKeys: JSON.parse(String(row.answered_keys)) as string[],
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
  if (row.status_message !== null) entry.statusMessage = String(row.status_message);
  if (row.input_requests !== null) entry.inputRequests = parse(row.input_requests);
  if (row.outcome !== null) entry.outcome = String(row.outcome) as OutcomeKind;
  if (row.result !== null) entry.result = parse(row.result);
  if (row.error !== null) entry.error = parse(row.error) as unknown as JsonRpcErrorObject;
  if (row.output_schema !== null) entry.outputSchema = parse(row.output_schema);
  if (row.bearer !== null) entry.bearer = String(row.bearer);
  if (row.owner_pid !== null) entry.ownerPid = Number(row.owner_pid);
  if (row.protocol_version !== WIRE_2026) entry.protocolVersion = String(row.protocol_version);
  return entry;
}

function parse(value: unknown): Record<string, unknown> {
  return JSON.parse(String(value)) as Record<string, unknown>;
}
