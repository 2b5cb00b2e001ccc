import type { InputRequest, JsonObject } from '../task/record.js';
import { formatProgress } from './limits.js';
import { ParkSignal } from './park.js';
import { SleepSignal } from './sleep-signal.js';
import { MAX_DURABLE_WAIT_MS } from '../task/timers.js';
import type { ElicitAnswer, ElicitParams, ProgressUpdate, TaskContext } from './tool.js';

/**
 * What a context needs from where it runs: durable (a task) or in memory (a synchronous call).
 * The context itself is the same object either way, so a handler cannot tell the difference
 * except by `taskId`.
 */
export interface ContextBackend {
  readonly taskId: string | undefined;
  readonly principal: string;
  readonly attempt: number;
  readonly signal: AbortSignal;
  /** Answers received so far, by key. */
  answers(): Record<string, JsonObject>;
  /** Record the questions durably (or not) before the handler unwinds with a ParkSignal. */
  park(requests: Record<string, InputRequest>, statusMessage?: string): Promise<void>;
  writeProgress(statusMessage: string): Promise<void>;
  /** Append to the task's output (durably for a task; a call without one keeps nothing). */
  appendOutput(text: string): Promise<void>;
  /** Resolves once every output appended so far was written (or failed). */
  flushOutput(): Promise<void>;
  loadStep(name: string): { found: boolean; value?: unknown };
  saveStep(name: string, value: unknown): Promise<void>;
  /**
   * The `n`-th sleep of this run, `ms` long: resolves 0 when it is over (replayed, or slept in
   * place), else the ms still to wait durably (it is recorded; the handler then unwinds).
   */
  sleep(n: number, ms: number): Promise<number>;
}

const PROGRESS_WRITE_INTERVAL_MS = 200;

export class RunContext implements TaskContext {
  readonly #backend: ContextBackend;
  #progressTotal = 0;
  #lastWriteAt = 0;
  #pendingMessage: string | undefined;
  #flushTimer: NodeJS.Timeout | undefined;
  #parkedOn: Record<string, InputRequest> | undefined;
  #sleeps = 0;
  #sleepingFor: number | undefined;

  constructor(backend: ContextBackend) {
    this.#backend = backend;
  }

  get taskId(): string | undefined {
    return this.#backend.taskId;
  }
  get principal(): string {
    return this.#backend.principal;
  }
  get attempt(): number {
    return this.#backend.attempt;
  }
  get signal(): AbortSignal {
    return this.#backend.signal;
  }

  /**
   * The questions this run parked on, once it asked. From then on the run's outcome is
   * decided: whatever the handler returns or throws is ignored and the task waits for the
   * answers, as if the handler had let the park signal through.
   */
  get parkedOn(): Record<string, InputRequest> | undefined {
    return this.#parkedOn;
  }

  /** The ms this run is to wait durably once it called `sleep`; from then on its outcome is ignored. */
  get sleepingFor(): number | undefined {
    return this.#sleepingFor;
  }

  async progress(update: ProgressUpdate | string): Promise<void> {
    if (this.#suspended) return;
    const normalized = typeof update === 'string' ? { message: update } : update;
    if (normalized.increment !== undefined) this.#progressTotal += normalized.increment;
    if (normalized.progress !== undefined) this.#progressTotal = normalized.progress;
    const counted = normalized.progress !== undefined || normalized.increment !== undefined;
    const message = formatProgress({
      ...normalized,
      ...(counted ? { progress: this.#progressTotal } : {}),
    });
    if (message === undefined) return;
    this.#pendingMessage = message;
    const wait = this.#lastWriteAt + PROGRESS_WRITE_INTERVAL_MS - Date.now();
    if (wait <= 0) return this.#flushProgress();
    // The backend never rejects (a failed progress write is logged, never a task's failure);
    // the catch is the last line of defence against an unhandled rejection from a timer.
    this.#flushTimer ??= setTimeout(() => {
      this.#flushProgress().catch(() => undefined);
    }, wait);
  }

  /** Writes the last throttled progress message, if any. */
  async #flushProgress(): Promise<void> {
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    const message = this.#pendingMessage;
    if (message === undefined || this.#backend.signal.aborted) return;
    this.#pendingMessage = undefined;
    this.#lastWriteAt = Date.now();
    await this.#backend.writeProgress(message);
  }

  async output(text: string): Promise<void> {
    if (typeof text !== 'string') {
      throw new TypeError(`ctx.output(text) needs a string, got ${typeof text}`);
    }
    if (this.#suspended || text === '') return;
    await this.#backend.appendOutput(text);
  }

  /** Waits for the output the handler wrote but did not await; never rejects. */
  async flushOutput(): Promise<void> {
    await this.#backend.flushOutput().catch(() => undefined);
  }

  dispose(): void {
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    this.#pendingMessage = undefined;
  }

  get #suspended(): boolean {
    return this.#parkedOn !== undefined || this.#sleepingFor !== undefined;
  }

  /** A handler that swallowed a park or sleep signal must not run past it. */
  #assertNotSuspended(): void {
    if (this.#parkedOn !== undefined) throw new ParkSignal(this.#parkedOn);
    if (this.#sleepingFor !== undefined) throw new SleepSignal(this.#sleepingFor);
  }

  async input(
    requests: Record<string, InputRequest>,
    statusMessage?: string,
  ): Promise<Record<string, JsonObject>> {
    this.#assertNotSuspended();
    const answers = this.#backend.answers();
    const keys = Object.keys(requests);
    if (keys.length === 0) throw new TypeError('ctx.input() needs at least one request');
    if (keys.every((key) => key in answers)) {
      return Object.fromEntries(keys.map((key) => [key, answers[key] as JsonObject]));
    }
    this.dispose();
    await this.#backend.park(requests, statusMessage);
    this.#parkedOn = requests;
    throw new ParkSignal(requests);
  }

  async elicit(key: string, params: ElicitParams): Promise<ElicitAnswer> {
    const request: InputRequest = {
      method: 'elicitation/create',
      params: { mode: 'form', ...params } as unknown as JsonObject,
    };
    const answers = await this.input({ [key]: request }, params.message);
    return answers[key] as unknown as ElicitAnswer;
  }

  async step<T>(name: string, fn: () => T | Promise<T>): Promise<T> {
    this.#assertNotSuspended();
    const recorded = this.#backend.loadStep(name);
    if (recorded.found) return recorded.value as T;
    const value = await fn();
    await this.#backend.saveStep(name, value === undefined ? null : value);
    return value;
  }

  async sleep(ms: number): Promise<void> {
    if (typeof ms !== 'number' || !(ms >= 0 && ms <= MAX_DURABLE_WAIT_MS)) {
      throw new TypeError(
        `ctx.sleep(ms) needs a number of milliseconds from 0 to ${MAX_DURABLE_WAIT_MS} (10 years), got ${String(ms)}`,
      );
    }
    this.#assertNotSuspended();
    this.#sleeps += 1;
    const remaining = await this.#backend.sleep(this.#sleeps, Math.round(ms));
    if (remaining <= 0) return;
    this.dispose();
    this.#sleepingFor = remaining;
    throw new SleepSignal(remaining);
  }
}
