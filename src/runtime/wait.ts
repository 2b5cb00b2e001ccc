import type { TaskRecord } from '../task/record.js';
import { isTerminal } from '../task/status.js';
import type { TaskRuntime } from './runtime.js';

/**
 * Waits for a terminal status: woken at once by local store events, and re-reading the store at
 * the task's poll interval for changes made by other processes.
 */
export async function waitForTerminal(
  runtime: TaskRuntime,
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

function changeOrTimeout(
  runtime: TaskRuntime,
  id: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      unsubscribe();
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(50, timeoutMs));
    const unsubscribe = runtime.events.on('task:updated', ({ task }) => {
      if (task.id === id) done();
    });
    signal?.addEventListener('abort', done, { once: true });
  });
}
