import type { InputRequest, JsonObject } from '../task/record.js';
import { formatProgress } from './limits.js';
import { ParkSignal } from './park.js';
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
  loadStep(name: string): { found: boolean; value?: unknown };
  saveStep(name: string, value: unknown): Promise<void>;
}

const PROGRESS_WRITE_INTERVAL_MS = 200;

export class RunContext implements TaskContext {
  readonly #backend: ContextBackend;
  #progressTotal = 0;
  #lastWriteAt = 0;
  #pendingMessage: string | undefined;
  #flushTimer: NodeJS.Timeout | undefined;
  #parkedOn: Record<string, InputRequest> | undefined;

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

  async progress(update: ProgressUpdate | string): Promise<void> {
    if (this.#parkedOn !== undefined) return;
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

  dispose(): void {
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    this.#pendingMessage = undefined;
  }

  async input(
    requests: Record<string, InputRequest>,
    statusMessage?: string,
  ): Promise<Record<string, JsonObject>> {
    if (this.#parkedOn !== undefined) throw new ParkSignal(this.#parkedOn);
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
    // A handler that swallowed the park signal must not run past its question.
    if (this.#parkedOn !== undefined) throw new ParkSignal(this.#parkedOn);
    const recorded = this.#backend.loadStep(name);
    if (recorded.found) return recorded.value as T;
    const value = await fn();
    await this.#backend.saveStep(name, value === undefined ? null : value);
    return value;
  }
}
