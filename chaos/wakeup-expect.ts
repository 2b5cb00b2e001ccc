/**
 * The right end of each wake-up chaos task (chaos/wakeup-tools.ts): a doze is cancelled by its
 * client mid-sleep, a fade expires asleep and is swept (gone from the store is its end), a
 * `retry: false` nap completes or ends "interrupted", a task in backoff is cancelled or runs
 * out of attempts.
 */
import type { TaskRecord } from '../src/task/record.js';
import { POLICY } from './policy-tools.js';
import type { Final, Spec, WakeKind } from './spec.js';

export const WAKE_TOOL: Record<WakeKind, string> = {
  doze: 'w_doze',
  fade: 'w_fade',
  oncenap: 'w_once_nap',
  backoff: 'p_flaky',
};

const HOUR_MS = 60 * 60 * 1000;

/** Whether `final` is a right end of a wake-up tool's task; undefined for another tool. */
export function isRightWakeup(task: TaskRecord, final: Final): boolean | undefined {
  const interrupted = final.status === 'failed' && (final.error ?? '').includes('interrupted');
  switch (task.tool) {
    case 'w_doze':
    case 'w_fade':
      return false; // only cancelled (or, for a fade, gone) is right
    case 'w_once_nap':
      return (
        interrupted ||
        (final.status === 'completed' && final.text === `w_once_nap:${Number(task.arguments['n'])}`)
      );
    default:
      return undefined;
  }
}

/** Seeded wake-up tasks. */
export function wakeupPlan(random: () => number, first: number, count: number): Spec[] {
  const kinds: WakeKind[] = ['doze', 'doze', 'fade', 'oncenap', 'oncenap', 'backoff'];
  const cancelAt = () => Math.round(200 + random() * 2800);
  return Array.from({ length: count }, (_, i): Spec => {
    const kind = kinds[Math.floor(random() * kinds.length)] as WakeKind;
    const n = first + i;
    if (kind === 'doze') return { n, kind, ms: HOUR_MS, cancelAfterMs: cancelAt() };
    if (kind === 'fade') return { n, kind, ms: HOUR_MS, expires: true };
    if (kind === 'oncenap') return { n, kind, ms: Math.round(500 + random() * 2500) };
    // Fails every attempt: cancelled in a backoff wait, or failed after the last one.
    const fails = POLICY.flaky.maxAttempts;
    return { n, kind, ms: 20, cancelAfterMs: cancelAt(), args: { fails, deaf: 0 } };
  });
}
