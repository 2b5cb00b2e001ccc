import { TaskrailError } from '../../task/errors.js';
import type { TaskRecord } from '../../task/record.js';

/** The port's rule for compareAndSet: the next version is exactly one revision ahead. */
export function assertNextRevision(next: TaskRecord, expectedRevision: number): void {
  if (next.revision !== expectedRevision + 1) {
    throw new TaskrailError(
      'INVALID_ARGUMENT',
      `task ${next.id}: compareAndSet needs next.revision = ${expectedRevision + 1}, got ${next.revision}`,
    );
  }
}

export function assertLeaseMs(leaseMs: number): void {
  if (!Number.isFinite(leaseMs) || leaseMs <= 0) {
    throw new TaskrailError('INVALID_ARGUMENT', `lease duration must be > 0 ms, got ${leaseMs}`);
  }
}

/** Names no path or URL: the message may reach a client. */
export function storeClosedError(_description?: string): TaskrailError {
  return new TaskrailError('STORE_UNAVAILABLE', 'the task store is closed');
}

/** A fence admits a write only while its token is the task's stored lease token. */
export function fenceRefuses(
  fence: { leaseToken: string } | undefined,
  storedToken: string | null | undefined,
): boolean {
  return fence !== undefined && storedToken !== fence.leaseToken;
}

export function assertDelayMs(delayMs: number): void {
  if (!Number.isFinite(delayMs) || delayMs < 0) {
    throw new TaskrailError('INVALID_ARGUMENT', `a wait must be ≥ 0 ms, got ${delayMs}`);
  }
}

/** The refusal of a create past `CreateOptions.maxUnfinished`. */
export function queueFullError(task: TaskRecord, maxUnfinished: number): TaskrailError {
  return new TaskrailError(
    'QUEUE_FULL',
    `task ${task.id}: its principal already has ${maxUnfinished} unfinished tasks`,
  );
}

/** The cap a create of `task` is held to: only an unfinished task takes a place. */
export function capOf(task: TaskRecord, maxUnfinished: number | undefined): number | undefined {
  return task.status === 'working' || task.status === 'input_required' ? maxUnfinished : undefined;
}
