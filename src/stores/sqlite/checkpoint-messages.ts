import { statSync } from 'node:fs';

/**
 * What the serving thread (checkpointer.ts) and the checkpoint thread (checkpoint-worker.ts)
 * share: the worker's start data, its messages, and how both measure the WAL. A file of its own
 * so the worker thread loads neither the checkpointer nor its `Worker` plumbing.
 */

export interface CheckpointWorkerData {
  path: string;
  /** Checkpoint once this many committed frames wait in the WAL (SQLite's own default: 1000). */
  thresholdFrames: number;
  pageSize: number;
  pollMs: number;
}

export type CheckpointWorkerMessage = { type: 'checkpointed'; frames: number } | { type: 'closed' };

/**
 * Bytes in the WAL. Read with stat, never by opening the -shm or -wal file: closing any
 * descriptor of a file drops every POSIX lock this process holds on it, SQLite's included
 * (https://sqlite.org/howtocorrupt.html#_posix_advisory_locks_canceled_by_a_separate_thread_doing_close_).
 */
export function walBytes(walPath: string): number {
  try {
    return statSync(walPath).size;
  } catch {
    return 0; // no WAL yet
  }
}
