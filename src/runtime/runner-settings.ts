import type { PermitAsk, TaskStore } from '../store/port.js';
import type { Clock } from '../task/time.js';
import type { Logger, RunObserver, ToolCatalog } from './api.js';
import type { StoreHealth } from './store-health.js';
import type { RunAbort } from './run-abort.js';

export interface RunnerSettings {
  store: TaskStore;
  tools: ToolCatalog;
  owner: string;
  leaseMs: number;
  heartbeatMs: number;
  maxAttempts: number;
  maxResultBytes: number;
  /** A result with more text is kept whole in the task's `result` text and handed out shortened. */
  maxResultChars: number;
  /** The longest result text kept at all. */
  maxResultTextChars: number;
  /** The most of a task's output kept; the oldest part gives way past it. */
  maxOutputChars: number;
  clock: Clock;
  logger: Logger;
  /** One place that logs a store outage once and its end once. */
  health: StoreHealth;
  /** How long an outcome, step or park write is retried through store trouble. */
  writeBudgetMs: number;
  /** Where running tasks register their abort controller, so a cancellation can reach them. */
  running: Map<string, RunAbort>;
  /** The lease each running task holds, by task id. */
  leases: Map<string, string>;
  /** Called once a task's handler has returned (or thrown), before its outcome is written. */
  handlerDone?: (taskId: string) => void;
  /** A task is about to wait durably, runnable again in `delayMs`: run it then. */
  wake?: (taskId: string, delayMs: number) => Promise<void>;
  /**
   * A task waiting for a concurrency permit may start now: run it soon, anywhere, asking for
   * `permit` (its key and limit) in the claim.
   */
  runSoon?: (taskId: string, permit?: PermitAsk) => void;
  /** Tasks dispatched while this process still ran them: dispatched again once that run ends. */
  heldBack?: Set<string>;
  /**
   * A claim spared an expired lease just after a store outage (its holder may renew): look
   * again once the holders had their renewal interval.
   */
  spared?: (taskId: string) => void;
  /** Told of time-outs, retries and waits (metrics); see `observe`. */
  observer?: RunObserver | undefined;
}

/** Tells the observer, if any; an observer that throws changes nothing. */
export function observe(settings: RunnerSettings, tell: (observer: RunObserver) => void): void {
  if (settings.observer === undefined) return;
  try {
    tell(settings.observer);
  } catch {
    // metrics must never change a run
  }
}
