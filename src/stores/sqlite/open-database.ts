import { accessSync, constants, existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { TaskrailError } from '../../task/errors.js';
import { migrate } from './schema.js';

export interface OpenDatabaseOptions {
  /** SQLite's own (thread-blocking) busy wait once open. */
  busyTimeoutMs: number;
  /**
   * The busy wait while opening (WAL mode, schema check or migration): nothing is served yet,
   * so blocking is fine, and another process's write must not fail the open.
   */
  openBusyTimeoutMs: number;
  synchronous: 'normal' | 'full';
  now: number;
}

const CORRUPT_CODES = new Set(['SQLITE_NOTADB', 'SQLITE_CORRUPT', 'SQLITE_CORRUPT_VTAB']);

function sqliteCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : undefined;
}

const TRANSIENT_CODES = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|READONLY|CANTOPEN|NOMEM|PROTOCOL)/;
const TRANSIENT_ERRNOS = new Set(['ENOSPC', 'EROFS', 'EIO', 'EACCES', 'EPERM', 'EMFILE', 'ENFILE']);

/** True for a lock held by another connection: worth waiting for, asynchronously. */
export function isLockError(error: unknown): boolean {
  return /^SQLITE_(BUSY|LOCKED)/.test(sqliteCode(error) ?? '');
}

function safeReason(code: string): string {
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return 'the task store stayed locked by another process';
  }
  if (code === 'SQLITE_FULL' || code === 'ENOSPC') return 'the task store disk is full';
  if (code.startsWith('SQLITE_READONLY') || code === 'EROFS') return 'the task store is read-only';
  return 'the task store cannot be read or written';
}

/**
 * Maps a driver error to a TaskrailError that says what to do; unknown errors pass through.
 * Transient trouble (lock, full disk, I/O, read-only) becomes STORE_UNAVAILABLE with a message
 * safe for any log or client: no path, no driver text (that stays in `cause`). `path` is named
 * only for errors at open, which an operator reads.
 */
export function storeError(error: unknown, path?: string): unknown {
  if (error instanceof TaskrailError) return error;
  const code = sqliteCode(error) ?? errnoCode(error);
  if (code === undefined) return error;
  const reason = error instanceof Error ? error.message : String(error);
  if (CORRUPT_CODES.has(code) || code.startsWith('SQLITE_CORRUPT')) {
    const where = path === undefined ? 'the task store' : `task store ${path}`;
    const detail = path === undefined ? '' : ` (${reason})`;
    return new TaskrailError(
      'STORE_CORRUPT',
      `${where} is not a SQLite database or is damaged${detail}: move the file ` +
        'aside (taskrail then creates a new one) or point --store at another path',
      { cause: error },
    );
  }
  if (!TRANSIENT_CODES.test(code) && !TRANSIENT_ERRNOS.has(code)) return error;
  const hint = path === undefined ? '' : ` (${path}: ${reason})`;
  return new TaskrailError('STORE_UNAVAILABLE', `${safeReason(code)}${hint}; retry later`, {
    cause: error,
  });
}

function errnoCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && TRANSIENT_ERRNOS.has(code) ? code : undefined;
}

/**
 * Creates the folder and its missing parents one level at a time. Node's own recursive mkdir
 * spins forever on some file systems that answer ENOENT for a parent that exists (procfs).
 */
function makeFolders(folder: string): void {
  const missing: string[] = [];
  for (let current = folder; !existsSync(current); current = dirname(current)) {
    missing.unshift(current);
    if (dirname(current) === current) break;
  }
  for (const path of missing) mkdirSync(path);
}

function ensureFolder(folder: string): void {
  try {
    makeFolders(folder);
    if (!statSync(folder).isDirectory()) throw notAFolder(folder);
    accessSync(folder, constants.W_OK);
  } catch (error) {
    if (error instanceof TaskrailError) throw error;
    throw new TaskrailError(
      'STORE_UNAVAILABLE',
      `cannot create or write the folder ${folder} for the task store ` +
        `(${(error as Error).message}): create it with write access, or point --store at another path`,
      { cause: error },
    );
  }
}

/** A path below a regular file: permanent, so no "retry later". */
function notAFolder(folder: string): TaskrailError {
  return new TaskrailError(
    'CONFIG',
    `the task store's folder ${folder} is a file, not a folder: point --store at a path ` +
      'inside a folder (e.g. sqlite:./.taskrail/tasks.db)',
  );
}

function checkFile(path: string): void {
  let isFile: boolean;
  try {
    isFile = statSync(path).isFile();
  } catch {
    return; // absent: SQLite creates it
  }
  try {
    if (!isFile) throw new Error('not a regular file');
    accessSync(path, constants.R_OK | constants.W_OK);
  } catch (error) {
    throw new TaskrailError(
      'STORE_UNAVAILABLE',
      `task store ${path} is not a writable file (${(error as Error).message}): fix its ` +
        'permissions, or point --store at another path',
      { cause: error },
    );
  }
}

/**
 * Opens (creating if needed) the database file in WAL mode with a busy timeout, so several
 * processes can share it, and brings its schema up to date.
 */
export function openDatabase(path: string, options: OpenDatabaseOptions): Database.Database {
  ensureFolder(dirname(path));
  checkFile(path);
  let db: Database.Database;
  try {
    db = new Database(path);
  } catch (error) {
    throw storeError(error, path);
  }
  try {
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.openBusyTimeoutMs))}`);
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    if (mode !== 'wal') {
      throw new TaskrailError(
        'STORE_UNAVAILABLE',
        `task store ${path} cannot use WAL mode (got '${String(mode)}'): put it on a local disk`,
      );
    }
    db.pragma(`synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    migrate(db, path, options.now);
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs))}`);
    return db;
  } catch (error) {
    db.close();
    throw storeError(error, path);
  }
}
