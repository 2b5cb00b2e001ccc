/**
 * How long to wait before attempt `attempt` of something that failed: the first delay grows by
 * a factor per attempt up to a cap, optionally jittered so that many waiters that failed
 * together do not all come back together.
 */
export interface Backoff {
  /** The delay before the second attempt (the first retry). */
  backoffMs: number;
  /** What each further retry multiplies the delay by. Default 2. */
  backoffFactor?: number;
  /** The longest delay. */
  maxBackoffMs: number;
  /** Draw the delay from [½·delay, delay) instead of waiting exactly `delay`. Default false. */
  jitter?: boolean;
}

/**
 * The delay in whole ms before retry number `retry` (1 for the first retry, which follows the
 * first failed attempt): `backoffMs × backoffFactor^(retry−1)`, rounded, capped by
 * `maxBackoffMs`, then jittered if asked (rounded down, so it stays below the delay). Whole ms
 * because timers and stored wake times take whole ms. `random` is the source of the jitter, in
 * [0, 1); tests pass their own.
 */
export function backoffDelayMs(
  backoff: Backoff,
  retry: number,
  random: () => number = Math.random,
): number {
  const exponent = Math.max(0, Math.floor(retry) - 1);
  // A zero first delay stays zero however far it grows (0 × Infinity would be NaN).
  const grown =
    backoff.backoffMs > 0 ? backoff.backoffMs * (backoff.backoffFactor ?? 2) ** exponent : 0;
  const capped = Math.min(Math.round(grown), backoff.maxBackoffMs);
  return backoff.jitter === true ? Math.floor(capped * (0.5 + random() / 2)) : capped;
}
