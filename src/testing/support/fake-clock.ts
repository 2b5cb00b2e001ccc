import type { Clock } from '../../task/time.js';

/** A clock that moves only when told, for stores' lease and expiry times in tests. */
export interface FakeClock {
  /** Pass this to the store (`{ clock }`). */
  readonly clock: Clock;
  now(): number;
  /** Moves time forward by `ms` and returns the new time. */
  advance(ms: number): number;
  set(epochMs: number): void;
}

/**
 * Starts at the real current time (whole milliseconds) by default, so a backend that also
 * hands expiry times to its server (e.g. Redis PEXPIREAT) sees plausible values.
 */
export function createFakeClock(start: number = Date.now()): FakeClock {
  let now = Math.floor(start);
  return {
    clock: () => now,
    now: () => now,
    advance(ms) {
      if (!(ms >= 0)) throw new RangeError(`a fake clock only moves forward, got ${ms} ms`);
      now += ms;
      return now;
    },
    set(epochMs) {
      now = Math.floor(epochMs);
    },
  };
}
