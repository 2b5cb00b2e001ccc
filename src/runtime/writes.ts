import type { TaskStore } from '../store/port.js';
import type { TaskRecord } from '../task/record.js';
import { isTerminal } from '../task/status.js';

const MAX_ATTEMPTS = 20;

/**
 * Read-modify-write with compare-and-set, retried on conflict. `change` returns the next record,
 * or undefined to write nothing. Resolves with the stored record after the write (or the current
 * one when nothing was written), or undefined when the task is gone. A terminal task is never
 * passed to `change` unless `includeTerminal` is set: terminal is final.
 */
export async function updateTask(
  store: TaskStore,
  id: string,
  change: (task: TaskRecord) => TaskRecord | undefined,
  { includeTerminal = false }: { includeTerminal?: boolean } = {},
): Promise<TaskRecord | undefined> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
    const current = await store.get(id);
    if (current === undefined) return undefined;
    if (isTerminal(current.status) && !includeTerminal) return current;
    const next = change(current);
    if (next === undefined || next === current) return current;
    const outcome = await store.compareAndSet(next, current.revision);
    if (outcome.ok) return outcome.task;
    if (outcome.current === undefined) return undefined;
  }
  throw new Error(`task ${id}: gave up after ${MAX_ATTEMPTS} conflicting writes`);
}
