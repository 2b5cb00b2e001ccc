import type { Clock } from '../../task/time.js';
import { timerDelay } from '../../task/timers.js';
import type { Statements } from './statements.js';

/** What the alarm reads from the file (each on the store's clock). */
export interface WaitQueries {
  /** The earliest wake time after `after` of a durable wait nobody claimed, if any. */
  nextWake(after: number): Promise<number | undefined>;
  /** Waits that came due after `since`, up to `now`, and that nobody claimed, earliest first. */
  dueWaits(since: number, now: number, limit: number): Promise<{ id: string; at: number }[]>;
}

/** The queries on a store's statements; `run` is the store's (it waits out other processes' locks). */
export function waitQueries(
  sql: Pick<Statements, 'selectNextWake' | 'selectDueWaits'>,
  run: <T>(operation: () => T) => Promise<T>,
): WaitQueries {
  return {
    nextWake: (after) =>
      run(() => (sql.selectNextWake.get({ after }) as { at: number | null }).at ?? undefined),
    dueWaits: (since, now, limit) =>
      run(() => sql.selectDueWaits.all({ since, now, limit }) as { id: string; at: number }[]),
  };
}

/** Waits handed to the listeners per firing at most; past it the recovery scan finds the rest. */
const DUE_BATCH = 10_000;

/**
 * One timer for the durable waits (`releaseUntil`) in a SQLite file: armed for the earliest
 * wake time, read from the file when the first listener comes (so waits set before this
 * process started are woken on time, not at the next recovery scan, up to a lease later) and
 * moved earlier by every wait this store sets. When it fires it hands the waits that came due
 * since the last firing to the listeners (the first firing, at once, hands every wait already
 * due) and re-arms for the next one. Inert (no timer, no query) while nobody listens;
 * the timer never keeps the process alive. Waits another process sets on the same file are
 * that process's to wake, or the recovery scan's.
 */
export class WaitAlarm {
  readonly #clock: Clock;
  readonly #queries: WaitQueries;
  readonly #listeners = new Set<(taskId: string) => void>();
  #timer: NodeJS.Timeout | undefined;
  #armedFor: number | undefined;
  /** Waits due before this were handed over already. */
  #handedUpTo = Number.NEGATIVE_INFINITY;
  #onError: (error: unknown) => void;

  constructor(clock: Clock, queries: WaitQueries, onError: (error: unknown) => void) {
    this.#clock = clock;
    this.#queries = queries;
    this.#onError = onError;
  }

  /** Calls `onDue` with each task whose wait is over, at its wake time; returns the stop. */
  watch(onDue: (taskId: string) => void): () => void {
    this.#listeners.add(onDue);
    if (this.#listeners.size === 1) this.#fire();
    return () => {
      this.#listeners.delete(onDue);
      if (this.#listeners.size === 0) this.stop();
    };
  }

  /** A wait was set until `wakeAt`: the alarm comes no later than that. */
  waitSet(wakeAt: number): void {
    if (this.#listeners.size === 0) return;
    // Set within the millisecond of the last firing: the next one must not skip it.
    if (wakeAt <= this.#handedUpTo) this.#handedUpTo = wakeAt - 1;
    this.#arm(wakeAt);
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#armedFor = undefined;
  }

  /** Arms for `at` unless armed for an earlier time already. */
  #arm(at: number): void {
    if (this.#armedFor !== undefined && this.#armedFor <= at) return;
    clearTimeout(this.#timer);
    this.#armedFor = at;
    // A timer may fire a moment before the clock reaches `at`, or long before a wake time past
    // the longest timer (a sleep of months): #fire then finds nothing due and arms again.
    this.#timer = setTimeout(() => this.#fire(), timerDelay(at - this.#clock()));
    this.#timer.unref();
  }

  #fire(): void {
    this.#timer = undefined;
    this.#armedFor = undefined;
    if (this.#listeners.size === 0) return;
    const now = this.#clock();
    this.#queries.dueWaits(this.#handedUpTo, now, DUE_BATCH).then((due) => {
      this.#handedUpTo = now;
      for (const { id } of due) for (const listener of this.#listeners) listener(id);
      this.#rearm();
    }, this.#failed);
  }

  /** Arms for the first wait not handed over yet (it may be due already: a timer fires early). */
  #rearm(): void {
    this.#queries.nextWake(this.#handedUpTo).then((at) => {
      if (at !== undefined && this.#listeners.size > 0) this.#arm(at);
    }, this.#failed);
  }

  /** A failed read (the file locked past its budget, or closed): the recovery scan remains. */
  readonly #failed = (error: unknown): void => {
    this.#onError(error);
  };
}
