import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { isStoreUnavailable } from '../task/errors.js';
import type { Logger } from './api.js';
import { backoffDelayMs, type Backoff } from '../task/backoff.js';

/**
 * Turns a storm of failed store calls into two log lines: one warning when the store first
 * fails, one when a call succeeds again (with how long and how many calls failed). Every
 * retry, heartbeat and scan reports here instead of logging for itself.
 */
export class StoreHealth {
  readonly #logger: Logger;
  #downSince: number | undefined;
  #failures = 0;
  /** When the store last answered again after failing (performance.now()). */
  #backAt: number | undefined;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  get down(): boolean {
    return this.#downSince !== undefined;
  }

  /** True while the store fails, and for `windowMs` after it answers again. */
  recentlyDown(windowMs: number): boolean {
    if (this.down) return true;
    return this.#backAt !== undefined && performance.now() - this.#backAt < windowMs;
  }

  failed(operation: string, error: unknown): void {
    this.#failures += 1;
    if (this.#downSince !== undefined) return;
    this.#downSince = Date.now();
    this.#logger.warn('task store unavailable; retrying, tasks are kept', {
      operation,
      error: describeError(error),
    });
  }

  ok(): void {
    if (this.#downSince === undefined) return;
    const downMs = Date.now() - this.#downSince;
    this.#logger.warn('task store available again', { downMs, failedCalls: this.#failures });
    this.#downSince = undefined;
    this.#failures = 0;
    this.#backAt = performance.now();
  }
}

/** The detail for the log: the driver's own error when a safe wrapper hides it. */
export function describeError(error: unknown): string {
  const cause = error instanceof Error && error.cause !== undefined ? error.cause : undefined;
  const main = error instanceof Error ? error.message : String(error);
  return cause === undefined
    ? main
    : `${main} (${cause instanceof Error ? cause.message : String(cause)})`;
}

export interface RetryOptions {
  health: StoreHealth;
  operation: string;
  /** Give up after this long; the last error is thrown. */
  budgetMs: number;
  /** Stop retrying when this says so (the lease was lost, the run was stopped). */
  giveUp?: () => boolean;
}

const STORE_RETRY: Backoff = { backoffMs: 25, maxBackoffMs: 1000, jitter: true };

/**
 * Runs a store call, retrying with backoff (25 ms doubling to 1 s, jittered) while the store is
 * unavailable. Any other error is thrown at once: it is not the kind that goes away.
 */
export async function withStoreRetry<T>(work: () => Promise<T>, options: RetryOptions): Promise<T> {
  const deadline = Date.now() + options.budgetMs;
  for (let attempt = 0; ; attempt += 1) {
    try {
      const value = await work();
      options.health.ok();
      return value;
    } catch (error) {
      if (!isStoreUnavailable(error)) throw error;
      options.health.failed(options.operation, error);
      const delay = backoffDelayMs(STORE_RETRY, attempt + 1);
      if (Date.now() + delay > deadline || options.giveUp?.() === true) throw error;
      await sleep(delay);
      // Asked again after the wait: a lease lost meanwhile must stop the next try.
      if (options.giveUp?.() === true) throw error;
    }
  }
}
