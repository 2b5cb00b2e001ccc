import { isStoreUnavailable } from '../task/errors.js';
import type { TaskRecord } from '../task/record.js';
import { markWaiting } from '../task/run-meta.js';
import * as t from '../task/transitions.js';
import { isFencedOut } from './fence.js';
import { observe, type RunnerSettings } from './runner-settings.js';
import { describeError, withStoreRetry } from './store-health.js';
import { updateTask } from './writes.js';

export interface WaitRequest {
  delayMs: number;
  /** The status message, given the wake time (estimated on the store's clock). */
  statusMessage: (wakeAt: number) => string;
  /** A retry: the attempt the task is on when it wakes. A sleep keeps its attempt. */
  nextAttempt?: number;
}

export interface WaitingRun {
  taskId: string;
  token: string;
  /** The attempt that asks for the wait: only it may set it. */
  attempt: number;
  latest: TaskRecord;
  /** The store's clock minus this process's. */
  storeOffsetMs: number;
}

/**
 * Ends a run in a durable wait: the task's status message (and, for a retry, its attempt) is
 * written under the lease, then the lease is given back until the wake time (`releaseUntil`,
 * judged on the store's clock), so the task holds no slot and no worker, and any process claims
 * it when its time comes. The executor is told, to run it then rather than at the next scan.
 * Resolves how the run ended: 'rested' (no lease left), or 'abandon' when the store stayed
 * unreachable (the lease then runs out, and the next claim counts an interruption).
 */
export async function waitDurably(
  settings: RunnerSettings,
  run: WaitingRun,
  request: WaitRequest,
): Promise<'rested' | 'abandon'> {
  const { taskId, token } = run;
  const wakeEstimate = settings.clock() + run.storeOffsetMs + request.delayMs;
  const kind = request.nextAttempt === undefined ? 'sleep' : 'backoff';
  // The wait is marked in the record's meta too, so the dashboard need not parse the message.
  const change = (current: TaskRecord): TaskRecord | undefined =>
    current.attempt === run.attempt && current.status === 'working'
      ? markWaiting(
          t.wait(
            current,
            request.statusMessage(wakeEstimate),
            settings.clock(),
            request.nextAttempt,
          ),
          kind,
          wakeEstimate,
        )
      : undefined;
  try {
    const fence = { leaseToken: token };
    const written = await retried(settings, 'record a wait', () =>
      updateTask(settings.store, taskId, change, { from: run.latest, fence }),
    ).catch((error: unknown) => {
      // Another attempt holds the task now: the wait is not ours to set.
      if (isFencedOut(error)) return undefined;
      throw error;
    });
    // Cancelled or taken over meanwhile: the lease is gone or someone else's.
    if (written === undefined || written.status !== 'working') return 'rested';
    const wakeAt = await retried(settings, 'set a wait', () =>
      settings.store.releaseUntil(taskId, token, request.delayMs),
    );
    // Queued once the wait is set, so the job cannot come before the store's wake time. A crash
    // in between leaves the task to the recovery scan, which finds it once it is due.
    if (wakeAt === undefined) return 'rested';
    observe(settings, (o) => o.waiting?.(written.tool, kind));
    await settings.wake?.(taskId, request.delayMs);
    return 'rested';
  } catch (error) {
    if (!isStoreUnavailable(error)) throw error;
    settings.logger.error('could not set a durable wait: the task store stayed unavailable', {
      taskId,
      error: describeError(error),
    });
    return 'abandon';
  }
}

function retried<T>(settings: RunnerSettings, operation: string, work: () => Promise<T>) {
  return withStoreRetry(work, {
    health: settings.health,
    operation,
    budgetMs: settings.writeBudgetMs,
  });
}
