import { performance } from 'node:perf_hooks';
import type { TaskStore } from '../store/port.js';
import type { Executor, Logger } from './api.js';
import { isGoneLocalOwner } from './owner.js';
import { runClaimedTask, type RunnerSettings } from './task-runner.js';
import { traced } from './tracing.js';

/**
 * Takes over, at once, the tasks whose lease holder was a process on this machine that no
 * longer exists (a crashed `serve` restarted on the same store), instead of waiting out their
 * leases. Each needs a free executor slot; the rest wait for the next scan or for their leases
 * to run out. Returns how many it took.
 */
export async function takeOverFromGone(
  settings: RunnerSettings,
  executor: Executor,
  logger: Logger,
  limit: number,
): Promise<number> {
  if (executor.reserve === undefined) return 0;
  const held = await settings.store.findLeased(limit);
  let taken = 0;
  const gone = held.filter(
    (lease) => isGoneLocalOwner(lease.owner) && !settings.leases.has(lease.id),
  );
  for (const { id, owner } of gone) {
    const slot = executor.reserve();
    if (slot === undefined) break;
    const sentAt = performance.now();
    const lease = await settings.store
      .claim(id, settings.owner, settings.leaseMs, { takeOverFrom: owner, load: true })
      .catch(() => undefined);
    if (lease === undefined) {
      slot.release();
      continue;
    }
    logger.warn('taking over a task whose process is gone', { taskId: id, owner });
    slot.run(id, () =>
      traced('taskrail.task.execute', { 'taskrail.task_id': id }, () =>
        runClaimedTask(settings, id, lease, sentAt),
      ),
    );
    taken += 1;
  }
  return taken;
}

/** Working tasks nobody holds, with their revisions when the store reports them. */
export async function runnableTasks(
  store: TaskStore,
  limit: number,
): Promise<{ id: string; revision?: number }[]> {
  if (store.findRunnableTasks !== undefined) return store.findRunnableTasks(limit);
  return (await store.findRunnable(limit)).map((id) => ({ id }));
}
