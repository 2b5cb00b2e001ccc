import type { TaskRecord } from '../task/record.js';
import { isTerminal } from '../task/status.js';
import type { TaskEvents } from '../store/events.js';
import { timerDelay } from '../task/timers.js';

/** What a wait reads of the runtime: the caller's view of a task, and the store's changes. */
export interface WaitSource {
  getTask(id: string, principal: string): Promise<TaskRecord | undefined>;
  readonly events: TaskEvents;
}

/**
 * Waits for a terminal status: woken at once by local store events, and re-reading the store at
 * the task's poll interval for changes made by other processes.
 */
export async function waitForTerminal(
  runtime: WaitSource,
  id: string,
  principal: string,
  signal?: AbortSignal,
): Promise<TaskRecord | undefined> {
  let task = await runtime.getTask(id, principal);
  while (task !== undefined && !isTerminal(task.status)) {
    signal?.throwIfAborted();
    await changeOrTimeout(runtime, id, task.pollIntervalMs, signal);
    task = await runtime.getTask(id, principal);
  }
  return task;
}

export interface SettleOptions {
  /** Give up after this long and return the task as it is then. */
  timeoutMs: number;
  /** Stops the wait early (the caller went away); the task is returned as it is. */
  signal?: AbortSignal;
  /** Sees every version read while waiting (progress for an inline caller). */
  onUpdate?: (task: TaskRecord) => void;
  /**
   * The version the caller just wrote (the task it created): it stands for the first read.
   * Only for a version no change can have followed yet (no I/O since its write), or that
   * change's event is missed and the wait sees it one poll interval (at least 50 ms) late.
   */
  fresh?: TaskRecord;
}

/**
 * Waits until the task needs someone (terminal or `input_required`) or the time is up, and
 * returns the last version read. Used by the inline wait of hosts without tasks.
 */
export async function waitForSettled(
  runtime: WaitSource,
  id: string,
  principal: string,
  options: SettleOptions,
): Promise<TaskRecord | undefined> {
  const deadline = Date.now() + options.timeoutMs;
  let task = options.fresh ?? (await runtime.getTask(id, principal));
  let seen = task?.revision;
  while (task !== undefined && !isSettled(task)) {
    const left = deadline - Date.now();
    if (left <= 0 || options.signal?.aborted === true) break;
    const changed = await changeOrTimeout(
      runtime,
      id,
      Math.min(task.pollIntervalMs, left),
      options.signal,
    );
    // A terminal version is final: the one the write announced is what a read would return.
    task =
      changed !== undefined && isTerminal(changed.status)
        ? changed
        : await runtime.getTask(id, principal);
    if (task !== undefined && task.revision !== seen) {
      seen = task.revision;
      options.onUpdate?.(task);
    }
  }
  return task;
}

function isSettled(task: TaskRecord): boolean {
  return isTerminal(task.status) || task.status === 'input_required';
}

/** Resolves with the task a local write of it announced, or undefined on time-out or abort. */
function changeOrTimeout(
  runtime: WaitSource,
  id: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<TaskRecord | undefined> {
  return new Promise((resolve) => {
    const done = (task?: TaskRecord) => {
      clearTimeout(timer);
      unsubscribe();
      signal?.removeEventListener('abort', aborted);
      resolve(task);
    };
    const aborted = () => done();
    const timer = setTimeout(done, timerDelay(Math.max(50, timeoutMs)));
    const unsubscribe = runtime.events.onTaskUpdated(id, ({ task }) => done(task));
    signal?.addEventListener('abort', aborted, { once: true });
  });
}
