import type { TaskStore } from '../store/port.js';
import { setLongTimeout, type LongTimeout } from '../task/timers.js';
import type { Executor, Logger } from './api.js';
import type { BackgroundWork } from './background-work.js';
import type { RunAbort } from './run-abort.js';

/**
 * A wake-up timer fires this much after the wait's end: timers and the store's clock may
 * disagree by a little, and a claim a moment early is refused (the task would then wait for the
 * next recovery scan).
 */
const WAKE_MARGIN_MS = 5;

/** What waking tasks out of their durable waits needs of the runtime. */
export interface WakeUpDeps {
  store: TaskStore;
  executor: Executor | undefined;
  logger: Logger;
  running: ReadonlyMap<string, RunAbort>;
  background: BackgroundWork;
  isStarted: () => boolean;
  /** Hands a task that is due again to the executor. */
  dispatch: (taskId: string) => Promise<void>;
}

/**
 * Runs tasks again when their durable waits end: through the executor's delayed jobs, the
 * store's own wake-ups, or else a timer per wait here.
 */
export class DurableWaitWakeUps {
  readonly #deps: WakeUpDeps;
  readonly #timers = new Map<string, LongTimeout>();
  /** The store hands due waits over itself (see `watch`): no timer per wait here. */
  #storeWakesWaits = false;

  constructor(deps: WakeUpDeps) {
    this.#deps = deps;
  }

  /**
   * A task waits durably until `delayMs` from now (on the store's clock). The executor keeps the
   * delayed run if it can; else a timer here dispatches it then (the store refuses an early
   * claim, and after a restart the recovery scan finds it once due).
   */
  async later(taskId: string, delayMs: number): Promise<void> {
    const { executor, logger } = this.#deps;
    if (executor === undefined || !this.#deps.isStarted() || this.#storeWakesWaits) return;
    if (executor.dispatchAfter !== undefined) {
      // Trouble here is not the wait's failure: the recovery scan runs the task once it is due.
      await executor.dispatchAfter(taskId, delayMs).catch((error: unknown) => {
        logger.warn('could not queue a wake-up; the recovery scan will run the task', {
          taskId,
          error: String(error),
        });
      });
      return;
    }
    this.#timers.get(taskId)?.clear();
    // A wait past the longest timer (a sleep of months) is armed in steps, not fired at once.
    const timer = setLongTimeout(
      () => {
        this.#timers.delete(taskId);
        this.#deps.background.run('wake a waiting task', this.#deps.dispatch(taskId));
      },
      delayMs + WAKE_MARGIN_MS,
      true,
    );
    this.#timers.set(taskId, timer);
  }

  /**
   * A store that wakes durable waits itself (SQLite) hands each due wait to the executor at its
   * time, also those set before this process started, which the recovery scan would find only
   * up to a lease later. An executor with delayed jobs (BullMQ, graphile-worker) keeps its own.
   * Returns the function that stops watching.
   */
  watch(): () => void {
    const { executor, store, running, background } = this.#deps;
    if (executor === undefined || executor.dispatchAfter !== undefined) return () => undefined;
    const stop = store.onWaitsDue?.((taskId) => {
      if (running.has(taskId)) return;
      background.run('wake a waiting task', this.#deps.dispatch(taskId));
    });
    if (stop === undefined) return () => undefined;
    this.#storeWakesWaits = true;
    return () => {
      this.#storeWakesWaits = false;
      stop();
    };
  }

  /**
   * The tasks were cancelled or deleted: their wake-ups go (a timer here, the executor's delayed
   * job). Trouble is logged, never the caller's: a job left runs a task that is gone, harmlessly.
   */
  async forget(taskIds: readonly string[]): Promise<void> {
    for (const taskId of taskIds) {
      this.#timers.get(taskId)?.clear();
      this.#timers.delete(taskId);
    }
    const { executor, logger } = this.#deps;
    if (executor?.forget === undefined || taskIds.length === 0) return;
    await executor.forget(taskIds).catch((error: unknown) => {
      logger.warn('could not remove the wake-ups of tasks that ended', {
        tasks: taskIds.length,
        error: String(error),
      });
    });
  }

  /** Drops the pending wake-up timers (the recovery scan finds those tasks later). */
  clearTimers(): void {
    for (const timer of this.#timers.values()) timer.clear();
    this.#timers.clear();
  }
}
