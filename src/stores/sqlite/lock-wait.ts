import { setTimeout as sleep } from 'node:timers/promises';
import { storeClosedError } from '../shared/checks.js';
import { isLockError, storeError } from './open-database.js';

/** SQLite's own (thread-blocking) busy wait per try; longer locks are waited for async. */
export const SYNC_BUSY_WAIT_MS = 5;

function lockBackoffMs(attempt: number): number {
  return Math.min(2 * 2 ** attempt, 50) * (0.5 + Math.random() / 2);
}

/**
 * Runs one synchronous database operation. SQLite's own busy wait blocks the thread (and so
 * every other request) while another process holds the write lock; it is kept to a few ms,
 * and a lock that outlasts it is waited for here, asynchronously, with backoff, up to
 * `budgetMs`. Failures leave as classified TaskrailErrors with safe messages.
 */
export async function withLockWaits<T>(
  operation: () => T,
  budgetMs: number,
  isClosed: () => boolean,
): Promise<T> {
  const deadline = Date.now() + budgetMs;
  for (let attempt = 0; ; attempt += 1) {
    if (isClosed()) throw storeClosedError();
    try {
      return operation();
    } catch (error) {
      const left = deadline - Date.now();
      if (!isLockError(error) || left <= 0) throw storeError(error);
      await sleep(Math.min(lockBackoffMs(attempt), left));
    }
  }
}
