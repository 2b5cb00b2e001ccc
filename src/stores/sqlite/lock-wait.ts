import { setTimeout as sleep } from 'node:timers/promises';
import { storeClosedError } from '../shared/checks.js';
import { isLockError, storeError } from './open-database.js';
import { backoffDelayMs, type Backoff } from '../../task/backoff.js';

/** SQLite's own (thread-blocking) busy wait per try; longer locks are waited for async. */
export const SYNC_BUSY_WAIT_MS = 5;

const LOCK_WAIT: Backoff = { backoffMs: 2, maxBackoffMs: 50, jitter: true };

/**
 * Runs one synchronous database operation. SQLite's own busy wait blocks the thread (and so
 * every other request) while another process holds the write lock; it is kept to a few ms,
 * and a lock that outlasts it is waited for here, asynchronously, with backoff, up to
 * `budgetMs`. Failures leave as classified TaskrailErrors with safe messages.
 */
export function withLockWaits<T>(
  operation: () => T,
  budgetMs: number,
  isClosed: () => boolean,
): Promise<T> {
  const deadline = Date.now() + budgetMs;
  // The first try runs here, synchronously: most operations find no lock, and an async
  // function around them would cost a promise and a microtask turn each.
  if (isClosed()) return Promise.reject(storeClosedError());
  try {
    return Promise.resolve(operation());
  } catch (error) {
    if (!isLockError(error) || deadline - Date.now() <= 0) return Promise.reject(storeError(error));
    return retryAfterLock(operation, deadline, isClosed);
  }
}

async function retryAfterLock<T>(
  operation: () => T,
  deadline: number,
  isClosed: () => boolean,
): Promise<T> {
  await sleep(Math.min(backoffDelayMs(LOCK_WAIT, 1), deadline - Date.now()));
  for (let attempt = 1; ; attempt += 1) {
    if (isClosed()) throw storeClosedError();
    try {
      return operation();
    } catch (error) {
      const left = deadline - Date.now();
      if (!isLockError(error) || left <= 0) throw storeError(error);
      await sleep(Math.min(backoffDelayMs(LOCK_WAIT, attempt + 1), left));
    }
  }
}
