import type { TaskStore } from '../store/port.js';
import type { TaskRecord } from '../task/record.js';
import { isTerminal } from '../task/status.js';
import { FencedOut, type RunFence } from './fence.js';

const MAX_ATTEMPTS = 20;

export interface UpdateOptions {
  /**
   * The caller's latest copy of the task: the first attempt starts from it instead of a read.
   * A stale copy costs one lost write, never a wrong one.
   */
  from?: TaskRecord;
  /**
   * The writing attempt's lease: the write lands only while it still holds the task. A refusal
   * rejects with `FencedOut` at once (a re-read and retry would overwrite the new attempt).
   */
  fence?: RunFence;
}

/**
 * Read-modify-write with compare-and-set, retried on conflict. `change` returns the next record,
 * or undefined to write nothing. Resolves with the stored record after the write (or the current
 * one when nothing was written), or undefined when the task is gone. A terminal task is never
 * passed to `change`: terminal is final.
 */
export async function updateTask(
  store: TaskStore,
  id: string,
  change: (task: TaskRecord) => TaskRecord | undefined,
  options: UpdateOptions = {},
): Promise<TaskRecord | undefined> {
  let current = options.from ?? (await store.get(id));
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
    if (current === undefined) return undefined;
    if (isTerminal(current.status)) return current;
    const next = change(current);
    if (next === undefined || next === current) return current;
    const outcome = await store.compareAndSet(next, current.revision, options.fence);
    if (outcome.ok) {
      if (outcome.wake !== undefined) options.fence?.permitReturned?.(outcome.wake);
      return outcome.task;
    }
    if (outcome.fenced === true) throw new FencedOut(id);
    // A lost write reports what is stored now: the next attempt starts from it.
    current = outcome.current;
  }
  throw new Error(`task ${id}: gave up after ${MAX_ATTEMPTS} conflicting writes`);
}
