/**
 * The longest delay node's timers take: 2^31−1 ms (~24.8 days). A longer one (or NaN, or a
 * negative) fires after 1 ms with a TimeoutOverflowWarning, so a timer that re-arms for a far
 * deadline would spin.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The longest durable wait (`ctx.sleep`, a retry's backoff): 10 years. Longer ones are refused
 * with an error rather than stored as wake times no store, job queue or date type keeps exactly
 * (BullMQ's delayed-job scores, PostgreSQL's `to_timestamp`, `Date`).
 */
export const MAX_DURABLE_WAIT_MS = 10 * 365 * 24 * 60 * 60 * 1000;

/**
 * A delay a timer can be armed with: NaN and negatives as 0, past `MAX_TIMER_MS` cut to it.
 * A caller whose deadline may lie further off re-checks it when the timer fires (or uses
 * `setLongTimeout`).
 */
export function timerDelay(ms: number): number {
  if (!(ms > 0)) return 0;
  return Math.min(Math.ceil(ms), MAX_TIMER_MS);
}

export interface LongTimeout {
  clear(): void;
}

/**
 * `setTimeout` for a delay of any length: armed in steps of at most `MAX_TIMER_MS`, so a wait
 * of months fires once, at its end, rather than at once. `unref`: the timer never keeps the
 * process alive.
 */
export function setLongTimeout(fire: () => void, ms: number, unref = false): LongTimeout {
  let timer: NodeJS.Timeout | undefined;
  let cleared = false;
  const arm = (left: number): void => {
    const step = timerDelay(left);
    timer = setTimeout(() => {
      if (cleared) return;
      if (left > step) arm(left - step);
      else fire();
    }, step);
    if (unref) timer.unref();
  };
  arm(ms);
  return {
    clear: () => {
      cleared = true;
      clearTimeout(timer);
    },
  };
}

/** Resolves after `ms` of any length (see `setLongTimeout`); rejects with the reason on abort. */
export function longDelay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) return reject(signal.reason as Error);
    const aborted = (): void => {
      timer.clear();
      reject(signal?.reason as Error);
    };
    const timer = setLongTimeout(() => {
      signal?.removeEventListener('abort', aborted);
      resolve();
    }, ms);
    signal?.addEventListener('abort', aborted, { once: true });
  });
}
