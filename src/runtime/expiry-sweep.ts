import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import type { TaskStore } from '../store/port.js';

export const SWEEP_INTERVAL_MS = 60_000;
const SWEEP_BATCH = 500;
/** Wall time one sweep batch may hold the thread; the batch size adapts to stay near it. */
const SWEEP_BATCH_BUDGET_MS = 8;

/**
 * Deletes expired tasks in batches, yielding to the event loop between them: a synchronous
 * store (SQLite) would otherwise hold the thread for the whole sweep. The batch size follows
 * the time each batch took, so a slow disk or a busy machine gets smaller batches rather than
 * longer stalls. `onDeleted` hears each batch's ids (their wake-up jobs go with them).
 */
export async function sweepExpired(
  store: TaskStore,
  onDeleted?: (taskIds: string[]) => Promise<void>,
): Promise<number> {
  let total = 0;
  let batch = SWEEP_BATCH;
  for (;;) {
    const started = performance.now();
    const deleted = await store.sweepExpired(batch);
    total += deleted.length;
    await onDeleted?.(deleted);
    if (deleted.length < batch) return total;
    batch = nextSweepBatch(batch, performance.now() - started);
    await yieldToLoop();
  }
}

/** Scales a sweep batch toward the time budget, within bounds, changing at most 2× a step. */
export function nextSweepBatch(batch: number, tookMs: number): number {
  const scale = SWEEP_BATCH_BUDGET_MS / Math.max(tookMs, 0.1);
  const next = Math.round(batch * Math.min(2, Math.max(0.5, scale)));
  return Math.min(SWEEP_BATCH * 4, Math.max(16, next));
}
