/**
 * Runs in a worker thread (see checkpointer.ts): checkpoints the WAL of one SQLite file on its
 * own connection, so the copy of WAL frames into the main file never runs on the serving
 * thread's event loop. A checkpoint only moves already-committed frames; it never changes what
 * a commit survives.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import {
  walBytes,
  type CheckpointWorkerData,
  type CheckpointWorkerMessage,
} from './checkpoint-messages.js';

function isLockError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^SQLITE_(BUSY|LOCKED)/.test(code);
}

interface CheckpointRow {
  busy: number;
  log: number;
  checkpointed: number;
}

function checkpoint(db: Database.Database, mode: 'PASSIVE' | 'TRUNCATE'): CheckpointRow {
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

/** The longest wait between two looks at a WAL nobody writes to. */
const IDLE_POLL_MS = 1000;

type Port = NonNullable<typeof parentPort>;

/** Checkpoints while the WAL holds `threshold` bytes or more; whether it did. */
function checkpointWhileFull(
  port: Port,
  db: Database.Database,
  walPath: string,
  threshold: number,
) {
  let checkpointed = false;
  // A writer faster than the checkpoint: go again at once rather than let the WAL pile up.
  for (let round = 0; round < 8 && walBytes(walPath) >= threshold; round += 1) {
    checkpointed = true;
    // PASSIVE copies the bulk without blocking writers; but as they keep appending it never
    // catches up, and SQLite starts the WAL over only once every frame is copied. TRUNCATE
    // then copies the few frames appended meanwhile, holding the write lock (writers on the
    // serving thread wait for it asynchronously), and empties the WAL file.
    const copied = checkpoint(db, 'PASSIVE');
    if (checkpoint(db, 'TRUNCATE').busy !== 0) break; // a reader on the WAL: next tick
    startWalOver(db);
    // TRUNCATE reports 0 frames once it emptied the WAL; it copied at least these.
    const frames = Math.max(0, copied.log);
    port.postMessage({ type: 'checkpointed', frames } satisfies CheckpointWorkerMessage);
  }
  return checkpointed;
}

function run(port: Port, data: CheckpointWorkerData): void {
  const db = new Database(data.path, { fileMustExist: true });
  // Blocks only this thread, but a TRUNCATE holds the write lock while it waits: kept short.
  db.pragma('busy_timeout = 200');
  const walPath = `${data.path}-wal`;
  const threshold = data.thresholdFrames * (data.pageSize + 24);
  let delay = data.pollMs;
  let seen = -1;
  const tick = () => {
    const bytes = walBytes(walPath);
    const checkpointed = checkpointWhileFull(port, db, walPath, threshold);
    // A WAL unchanged since the last look (nobody committed) is looked at twice as late, up to
    // IDLE_POLL_MS: a server at rest wakes this thread once a second, not twenty times.
    delay = bytes === seen && !checkpointed ? Math.min(delay * 2, IDLE_POLL_MS) : data.pollMs;
    seen = bytes;
    timer = setTimeout(tick, delay);
  };
  let timer = setTimeout(tick, delay);
  port.on('message', (message: unknown) => {
    if (message !== 'close') return;
    clearTimeout(timer);
    db.close();
    port.postMessage({ type: 'closed' } satisfies CheckpointWorkerMessage);
    port.close();
  });
}

if (parentPort !== null) run(parentPort, workerData as CheckpointWorkerData);
