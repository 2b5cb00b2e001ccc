/**
 * Thrown by `ctx.sleep()` in a task: it unwinds the handler, the task waits durably (holding no
 * slot) and the handler runs again from the start at the wake time, with the sleep replayed.
 * Handlers must let it propagate, as they do the park signal of `ctx.input()`.
 */
export class SleepSignal extends Error {
  readonly delayMs: number;
  constructor(delayMs: number) {
    super(`task sleeping for ${delayMs} ms`);
    this.name = 'SleepSignal';
    this.delayMs = delayMs;
  }
}

export function isSleepSignal(error: unknown): error is SleepSignal {
  return error instanceof SleepSignal;
}

/** The step a task's n-th `ctx.sleep` is recorded under (its wake time, on the store's clock). */
export function sleepStepName(n: number): string {
  return `taskrail:sleep:${n}`;
}

/** A wait this short (a clock estimate's error) is slept in place rather than durably. */
export const IN_PLACE_SLEEP_MS = 50;
