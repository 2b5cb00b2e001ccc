import type { Logger } from '../runtime/api.js';
import { timerDelay } from '../task/timers.js';

/** How long running tasks get to finish after SIGTERM/SIGINT before they are handed back. */
export const STOP_GRACE_MS = 10_000;

/**
 * The most a graceful stop may take in all: the grace, then hand-backs, leaving the fleet and
 * closing the store. Each of those waits on the store, and a store cut off by a link that drops
 * packets may never answer; the process then exits anyway, and the leases it could not hand
 * back run out and their tasks are recovered as interrupted.
 */
export const STOP_BOUND_MS = 20_000;

/** Names each part of a stop while it runs, so that a stop that overruns says what it waits for. */
export interface StopSteps {
  run<T>(name: string, work: () => Promise<T>): Promise<T>;
}

/** For a stop that nobody bounds (one after a failed start). */
export const untracked: StopSteps = { run: (_name, work) => work() };

class PendingSteps implements StopSteps {
  readonly pending = new Set<string>();

  async run<T>(name: string, work: () => Promise<T>): Promise<T> {
    this.pending.add(name);
    try {
      return await work();
    } finally {
      this.pending.delete(name);
    }
  }
}

/**
 * On SIGINT/SIGTERM runs `stop` once and exits 0, or 1 when it failed or overran `boundMs`
 * (then naming the steps still waiting). Returns the stop, for other triggers (stdin's end).
 */
export function onShutdown(
  stop: (steps: StopSteps) => Promise<void>,
  logger: Logger,
  boundMs = STOP_BOUND_MS,
): () => Promise<void> {
  let stopping = false;
  const run = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    const steps = new PendingSteps();
    const watchdog = setTimeout(() => {
      logger.error(overrunMessage(boundMs), { waitingFor: [...steps.pending] });
      process.exit(1);
    }, timerDelay(boundMs));
    watchdog.unref();
    try {
      await stop(steps);
      process.exit(0);
    } catch (error) {
      process.stderr.write(`taskrail: error while stopping: ${(error as Error).message}\n`);
      process.exit(1);
    }
  };
  process.once('SIGINT', () => void run());
  process.once('SIGTERM', () => void run());
  return run;
}

function overrunMessage(boundMs: number): string {
  return (
    `graceful stop: not done after ${boundMs / 1000} s (the task store may be unreachable); ` +
    'exiting without it. Leases not handed back run out, and their tasks are recovered as interrupted'
  );
}
