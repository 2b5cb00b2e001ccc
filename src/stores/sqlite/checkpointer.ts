import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import {
  walBytes,
  type CheckpointWorkerData,
  type CheckpointWorkerMessage,
} from './checkpoint-messages.js';

/** SQLite's own `wal_autocheckpoint` default, in pages (frames). */
export const AUTOCHECKPOINT_FRAMES = 1000;
/** How long close() lets the worker finish a checkpoint under way before stopping it. */
const CLOSE_GRACE_MS = 5000;
/** Until the worker starts, the WAL's size is looked at (one stat) after every 16th commit. */
export const COMMITS_PER_LOOK = 16;

/** A WAL up to this size found at open is checkpointed on the spot (~1 ms on a warm disk). */
const SMALL_WAL_BYTES = 256 * 1024;

function truncateSmallWal(db: Database.Database, walPath: string): void {
  if (walBytes(walPath) > SMALL_WAL_BYTES) return;
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
  } catch {
    // Busy (another process): the worker starts and checkpoints later.
  }
}

export interface CheckpointerOptions {
  warn: (message: string) => void;
  /** The worker's script; tests point it elsewhere to see the fallback. */
  workerUrl?: URL;
  thresholdFrames?: number;
  pollMs?: number;
}

/**
 * Keeps WAL checkpoints off the event loop. SQLite's automatic checkpoint runs inside the
 * commit that crosses `wal_autocheckpoint` pages, synchronously, stalling every request for
 * tens of ms on a busy disk. Here the serving connection sets `wal_autocheckpoint = 0` and a
 * worker thread with its own connection to the file, started once that many frames wait in the
 * WAL, checkpoints (PASSIVE, then TRUNCATE) each time as many wait again. If the worker cannot
 * start or dies, the connection goes back to the automatic checkpoint (one warning), so the WAL
 * never grows without bound.
 */
export class Checkpointer {
  /** Frames the worker copied into the main file so far (PASSIVE checkpoints, not the last). */
  checkpointedFrames = 0;
  /** Times the WAL's size was looked at while no worker ran (tests). */
  walLooks = 0;
  readonly #db: Database.Database;
  readonly #warn: (message: string) => void;
  readonly #workerUrl: URL;
  readonly #data: CheckpointWorkerData;
  readonly #walPath: string;
  /** A checkpoint's worth of WAL: the worker starts once the WAL holds this much. */
  readonly #startBytes: number;
  #worker: Worker | undefined;
  #commitsSinceLook = 0;
  #closing = false;
  #fellBack = false;
  #exited: Promise<void> = Promise.resolve();

  constructor(db: Database.Database, path: string, options: CheckpointerOptions) {
    this.#db = db;
    this.#warn = options.warn;
    this.#workerUrl = options.workerUrl ?? new URL('./checkpoint-worker.js', import.meta.url);
    this.#data = {
      path,
      pageSize: Number(db.pragma('page_size', { simple: true })),
      thresholdFrames: options.thresholdFrames ?? AUTOCHECKPOINT_FRAMES,
      pollMs: options.pollMs ?? 50,
    };
    db.pragma('wal_autocheckpoint = 0');
    this.#walPath = `${path}-wal`;
    this.#startBytes = this.#data.thresholdFrames * (this.#data.pageSize + 24);
    // A worker thread costs ~7 MiB, ~50 ms of CPU to start and, ~8 s later, V8's memory
    // reducer collecting its heap: a store nobody writes to much (a server at rest, a reader,
    // a few tasks an hour) never starts one. Commits are what make the WAL grow (another
    // process's store counts its own), so it is looked at after commits, never on a timer;
    // SQLite checkpoints what is left at close. What the opening found in the WAL (the schema,
    // a few frames of a last session) is checkpointed now, before any request; a large WAL (a
    // crashed writer) is the worker's at once.
    if (walBytes(this.#walPath) > 0) truncateSmallWal(db, this.#walPath);
    if (walBytes(this.#walPath) >= this.#startBytes) this.#start();
  }

  /** The serving connection committed: every 16th commit looks at the WAL's size. */
  committed(): void {
    if (++this.#commitsSinceLook < COMMITS_PER_LOOK) return;
    this.#commitsSinceLook = 0;
    if (!this.#canStart()) return;
    this.walLooks += 1;
    if (walBytes(this.#walPath) >= this.#startBytes) this.#start();
  }

  /** No worker runs, none fell back, and the store is not closing. */
  #canStart(): boolean {
    return this.#worker === undefined && !this.#fellBack && !this.#closing;
  }

  #start(): void {
    if (!this.#canStart()) return;
    let worker: Worker;
    try {
      worker = new Worker(this.#workerUrl, { workerData: this.#data });
    } catch (error) {
      this.#fallBack(error);
      return;
    }
    this.#worker = worker;
    worker.on('message', (message: CheckpointWorkerMessage) => {
      if (message.type === 'checkpointed') this.checkpointedFrames += message.frames;
    });
    worker.on('error', (error) => this.#fallBack(error));
    this.#exited = new Promise<number>((resolve) => worker.once('exit', resolve)).then((code) => {
      if (!this.#closing) this.#fallBack(new Error(`checkpoint worker exited with code ${code}`));
      this.#worker = undefined;
    });
    // The worker must not keep a process alive by itself (unref after the listeners, which
    // would ref it again); close() holds the loop while it ends.
    worker.unref();
  }

  /** True while the worker thread runs (false before the first write, after close() or a fallback). */
  get running(): boolean {
    return this.#worker !== undefined;
  }

  /**
   * Stops the worker (it closes its connection and ends) and waits for its exit, stopping it
   * after a grace. The first part runs synchronously, so the caller can close the serving
   * connection right after, in the same tick, as before there was a worker.
   */
  close(): Promise<void> {
    this.#closing = true;
    const worker = this.#worker;
    if (worker === undefined) return Promise.resolve();
    worker.ref(); // the loop stays alive until the worker has ended
    worker.postMessage('close');
    return this.#waitForExit(worker);
  }

  async #waitForExit(worker: Worker): Promise<void> {
    const stopped = await Promise.race([
      this.#exited.then(() => true),
      sleep(CLOSE_GRACE_MS, false, { ref: false }),
    ]);
    if (!stopped) await worker.terminate();
    await this.#exited;
  }

  #fallBack(error: unknown): void {
    if (this.#closing || this.#fellBack) return;
    this.#fellBack = true;
    this.#worker = undefined;
    if (this.#db.open) this.#db.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_FRAMES}`);
    const reason = error instanceof Error ? error.message : String(error);
    this.#warn(
      `the SQLite checkpoint worker stopped (${reason}); checkpoints run on the serving ` +
        'thread again (SQLite automatic checkpoint), which may delay requests briefly',
    );
  }
}
