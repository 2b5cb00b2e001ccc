import { isStoreUnavailable } from '../task/errors.js';
import type { Logger } from './api.js';
import type { StoreHealth } from './store-health.js';
import { timerDelay } from '../task/timers.js';

/**
 * The runtime's timer-driven work (recovery scans, expiry sweeps, wake-ups). It never rejects
 * unhandled: store trouble goes to `health`, once. Its success says nothing of recovery (a scan
 * only reads, and SQLite reads pass a write lock).
 */
export class BackgroundWork {
  readonly #logger: Logger;
  readonly #health: StoreHealth;
  #timers: NodeJS.Timeout[] = [];

  constructor(logger: Logger, health: StoreHealth) {
    this.#logger = logger;
    this.#health = health;
  }

  run(name: string, work: Promise<unknown>): void {
    work.then(
      () => undefined,
      (error: unknown) => {
        if (isStoreUnavailable(error)) this.#health.failed(name, error);
        else this.#logger.warn(`${name} failed`, { error: String(error) });
      },
    );
  }

  every(name: string, intervalMs: number, work: () => Promise<unknown>): void {
    const timer = setInterval(() => this.run(name, work()), timerDelay(intervalMs));
    timer.unref();
    this.#timers.push(timer);
  }

  /** Stops every repeating timer; work already under way goes on. */
  stopTimers(): void {
    for (const timer of this.#timers.splice(0)) clearInterval(timer);
  }
}
