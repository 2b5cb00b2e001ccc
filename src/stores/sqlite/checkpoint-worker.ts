/**
 * Runs in a worker thread (see checkpointer.ts): checkpoints the WAL of one SQLite file on its
 * own connection, so the copy of WAL frames into the main file never runs on the serving
 * thread's event loop. A checkpoint only moves already-committed frames; it never changes what
 * a commit survives.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { endianness } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

export interface CheckpointWorkerData {
  path: string;
  /** Checkpoint once this many committed frames wait in the WAL (SQLite's own default: 1000). */
  thresholdFrames: number;
  pollMs: number;
}

export type CheckpointWorkerMessage = { type: 'checkpointed'; frames: number } | { type: 'closed' };

/**
 * Frames in the WAL not yet copied into the main file, read from the shared wal-index header
 * in the `-shm` file (https://sqlite.org/walformat.html: mxFrame at byte 16, nBackfill at byte
 * 96, native byte order). A cheap read, no lock: a stale value only delays one check.
 */
function pendingFrames(shmPath: string): number {
  let fd: number;
  try {
    fd = openSync(shmPath, 'r');
  } catch {
    return 0; // no -shm yet: nothing written
  }
  try {
    const header = Buffer.alloc(100);
    if (readSync(fd, header, 0, 100, 0) < 100) return 0;
    const le = endianness() === 'LE';
    const mxFrame = le ? header.readUInt32LE(16) : header.readUInt32BE(16);
    const backfilled = le ? header.readUInt32LE(96) : header.readUInt32BE(96);
    return Math.max(0, mxFrame - backfilled);
  } finally {
    closeSync(fd);
  }
}

function isLockError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^SQLITE_(BUSY|LOCKED)/.test(code);
}

interface CheckpointRow {
  busy: number;
  log: number;
  checkpointed: number;
}

function checkpoint(
  db: Database.Database,
  mode: 'PASSIVE' | 'RESTART' | 'TRUNCATE',
): CheckpointRow {
  try {
    const [row] = db.pragma(`wal_checkpoint(${mode})`) as CheckpointRow[];
    return row ?? { busy: 1, log: -1, checkpointed: -1 };
  } catch (error) {
    // Another checkpoint or a writer: try at the next tick.
    if (isLockError(error)) return { busy: 1, log: -1, checkpointed: -1 };
    throw error;
  }
}

/**
 * The first commit into a WAL that starts over fsyncs the WAL header (synchronous NORMAL and
 * FULL alike); left to the serving thread, that fsync stalled its event loop ~100 ms on a busy
 * disk. So this thread makes that commit: page 1 rewritten unchanged (user_version set to its
 * own value, read in the same write transaction).
 */
function startWalOver(db: Database.Database): void {
  try {
    db.transaction(() => {
      const version = Number(db.pragma('user_version', { simple: true }));
      db.pragma(`user_version = ${version}`);
    }).immediate();
  } catch (error) {
    if (!isLockError(error)) throw error; // a writer came first: it starts the WAL over
  }
}

function run(port: NonNullable<typeof parentPort>, data: CheckpointWorkerData): void {
  const db = new Database(data.path, { fileMustExist: true });
  // Blocks only this thread, but a RESTART holds the write lock while it waits: kept short.
  db.pragma('busy_timeout = 200');
  const shmPath = `${data.path}-shm`;
  const timer = setInterval(() => {
    // A writer faster than the checkpoint: go again at once rather than let the WAL pile up.
    for (let round = 0; round < 8 && pendingFrames(shmPath) >= data.thresholdFrames; round += 1) {
      // PASSIVE copies the bulk without blocking writers; but as they keep appending it never
      // catches up, and SQLite starts the WAL over only once every frame is copied. RESTART
      // then copies the few frames appended meanwhile, holding the write lock (writers on the
      // serving thread wait for it asynchronously), so that the next writer starts over.
      checkpoint(db, 'PASSIVE');
      const done = checkpoint(db, 'RESTART');
      if (done.busy !== 0) break; // a reader still on the WAL: at the next tick
      startWalOver(db);
      const frames = done.checkpointed;
      port.postMessage({ type: 'checkpointed', frames } satisfies CheckpointWorkerMessage);
    }
  }, data.pollMs);
  port.on('message', (message: unknown) => {
    if (message !== 'close') return;
    clearInterval(timer);
    // The serving connection is idle now: copy what is left and reset the WAL to zero bytes.
    checkpoint(db, 'TRUNCATE');
    db.close();
    port.postMessage({ type: 'closed' } satisfies CheckpointWorkerMessage);
    port.close();
  });
}

if (parentPort !== null) run(parentPort, workerData as CheckpointWorkerData);
