import type { FleetMembership } from '../executors/shared/fleet-members.js';
import type { Logger } from '../runtime/api.js';
import { timerDelay } from '../task/timers.js';

/** What `serve --no-worker` knows about the workers that run its tasks. */
export interface WorkerWatch {
  /** Live workers at the last check; undefined before the first one or while the store is down. */
  readonly alive: number | undefined;
  stop(): void;
}

export const WORKER_CHECK_MS = 5_000;

/**
 * A replica that only enqueues accepts tasks that nothing runs while no worker is alive. Say so
 * once when the last worker goes (or none is there at start), and once when one is back.
 */
export function watchWorkers(
  fleet: FleetMembership,
  logger: Logger,
  intervalMs = WORKER_CHECK_MS,
): WorkerWatch {
  let alive: number | undefined;
  let warned = false;
  const check = async (): Promise<void> => {
    const count = await fleet.liveWorkers().catch(() => undefined);
    if (count === undefined) return;
    alive = count;
    if (count === 0 && !warned) {
      warned = true;
      logger.warn(
        'no taskrail worker is alive: tasks are accepted and queued, but none runs until a ' +
          '`taskrail worker` with the same --store starts',
      );
    } else if (count > 0 && warned) {
      warned = false;
      logger.info('a taskrail worker is alive again: queued tasks run', { workers: count });
    }
  };
  void check();
  const timer = setInterval(() => void check(), timerDelay(intervalMs));
  timer.unref();
  return {
    get alive() {
      return alive;
    },
    stop: () => clearInterval(timer),
  };
}
