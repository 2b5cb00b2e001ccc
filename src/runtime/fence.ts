import type { WriteFence } from '../store/port.js';
import { stopReasons } from './abort-reasons.js';
import type { Logger } from './api.js';
import type { RunAbort } from './run-abort.js';

/**
 * Thrown by an attempt's write that the store refused because another attempt holds the task
 * now (its lease was taken over). The attempt must stop: the write is never retried, and the
 * run ends without an outcome and without touching the lease, which is no longer its own.
 */
export class FencedOut extends Error {
  constructor(taskId: string) {
    super(`task ${taskId} belongs to another attempt now: this attempt's writes are refused`);
    this.name = 'FencedOut';
  }
}

export function isFencedOut(error: unknown): error is FencedOut {
  return error instanceof FencedOut;
}

/**
 * An attempt's fence. Once the attempt holds a concurrency permit the fence names it, and the
 * write that ends the lease gives it back: `permitReturned` then hears the waiters to run.
 */
export interface RunFence extends WriteFence {
  permitReturned?: (wake: readonly string[]) => void;
}

/** What an attempt's writes carry, and whether the store has already refused one. */
export interface AttemptFence {
  fence: RunFence;
  /** Set by the first refused write; every later write of the attempt is skipped. */
  fencedOut: boolean;
}

/**
 * Records that the store refused a write of this attempt: logs it once, aborts the handler's
 * signal (its work is no longer wanted) and returns the error that unwinds the handler.
 */
export function noteFencedOut(
  logger: Logger,
  taskId: string,
  attempt: AttemptFence & { abort: RunAbort; leaseLost: boolean },
): FencedOut {
  if (!attempt.fencedOut) {
    attempt.fencedOut = true;
    attempt.leaseLost = true;
    logger.warn('the task belongs to another attempt now: this run stops and writes nothing more', {
      taskId,
    });
    attempt.abort.abort(stopReasons.leaseLost());
  }
  return new FencedOut(taskId);
}
