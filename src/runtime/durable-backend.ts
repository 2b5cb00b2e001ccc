import { setTimeout as delay } from 'node:timers/promises';
import type { SaveStepOutcome } from '../store/port.js';
import { RPC, RpcError } from '../task/errors.js';
import type { InputRequest, JsonObject, TaskRecord } from '../task/record.js';
import { isTerminal } from '../task/status.js';
import * as t from '../task/transitions.js';
import type { ContextBackend } from './context.js';
import { isFencedOut, noteFencedOut, type AttemptFence } from './fence.js';
import type { RunnerSettings } from './runner-settings.js';
import { withStoreRetry } from './store-health.js';
import type { RunAbort } from './run-abort.js';
import { IN_PLACE_SLEEP_MS, sleepStepName } from './sleep-signal.js';
import { updateTask } from './writes.js';
import { OutputWriter } from './output-writer.js';
import { splitText, TEXT_CHUNK_CHARS } from '../store/text.js';

/** Progress is superseded by the next report: it gets a short retry, never a long wait. */
const PROGRESS_BUDGET_MS = 1000;

export interface RunState extends AttemptFence {
  /** The handler's signal is made from it only if the handler reads `ctx.signal`. */
  abort: RunAbort;
  /**
   * True once a heartbeat learnt that another runner holds the task, or could not renew the
   * lease in time (self-fencing): the attempt writes nothing more.
   */
  leaseLost: boolean;
  /** A renewal found the task held by another attempt: the store said the lease is gone. */
  takenOver?: boolean;
  /** The handler has returned or thrown: the clock no longer stops the attempt. */
  settled?: boolean;
  /**
   * True once the attempt timed out: the runner has moved on, so nothing the handler does later
   * (progress, steps, questions, sleeps) is written.
   */
  closed?: boolean;
  /** The store's clock minus this process's, estimated from the lease grant. */
  storeOffsetMs?: number;
}

/** What a write from an attempt the runner gave up on gets. */
function closedError(): RpcError {
  return new RpcError(RPC.INTERNAL_ERROR, 'the attempt timed out; its writes are discarded');
}

/**
 * The context backend of a task run. `latest` follows the runner's own writes, so the next write
 * need not read the task first. Park and step writes are retried through store trouble while
 * the lease is held; progress writes never fail the handler. Every write carries the run's
 * lease as its fence: once the store refuses one (another attempt holds the task), the run is
 * fenced out, its handler's signal aborted, and nothing more is written.
 */
export function durableBackend(
  settings: RunnerSettings,
  latest: { task: TaskRecord },
  steps: Record<string, unknown>,
  run: RunState,
): ContextBackend {
  return new DurableBackend(settings, latest, steps, run);
}

/** A class, not closures: every run makes one, and most use none of its methods. */
class DurableBackend implements ContextBackend {
  readonly taskId: string;
  readonly principal: string;
  readonly attempt: number;
  readonly #settings: RunnerSettings;
  readonly #latest: { task: TaskRecord };
  readonly #steps: Record<string, unknown>;
  readonly #run: RunState;
  #answers: Record<string, JsonObject>;
  /** Made at a handler's first `ctx.output` (most never write any). */
  #output: OutputWriter | undefined;

  constructor(
    settings: RunnerSettings,
    latest: { task: TaskRecord },
    steps: Record<string, unknown>,
    run: RunState,
  ) {
    const task = latest.task;
    this.taskId = task.id;
    this.principal = task.principal;
    this.attempt = task.attempt;
    this.#settings = settings;
    this.#latest = latest;
    this.#steps = steps;
    this.#run = run;
    this.#answers = task.inputResponses;
  }

  get signal(): AbortSignal {
    return this.#run.abort.signal;
  }

  answers(): Record<string, JsonObject> {
    return this.#answers;
  }

  async park(requests: Record<string, InputRequest>, statusMessage?: string): Promise<void> {
    const clock = this.#settings.clock;
    const parked = await this.#retried(
      'park for input',
      () => this.#write((current) => t.requestInput(current, requests, clock(), statusMessage)),
      this.#settings.writeBudgetMs,
    );
    if (parked === undefined || isTerminal(parked.status) || parked.status === 'working') {
      throw new RpcError(RPC.INTERNAL_ERROR, 'task ended');
    }
    this.#answers = parked.inputResponses;
  }

  async writeProgress(statusMessage: string): Promise<void> {
    const run = this.#run;
    const settings = this.#settings;
    if (run.closed === true) return;
    const budget = settings.health.down ? 0 : PROGRESS_BUDGET_MS;
    await this.#retried(
      'write progress',
      () =>
        this.#write((current) =>
          current.status === 'working'
            ? t.report(current, statusMessage, settings.clock())
            : undefined,
        ),
      budget,
    ).catch((error: unknown) => {
      // Never the task's failure: the store's trouble is logged once by `health`, a lost
      // lease once by the heartbeat or the first refused write, any other error here is a bug
      // worth one line.
      if (!settings.health.down && !run.leaseLost && !isFencedOut(error)) {
        settings.logger.warn('progress not recorded', {
          taskId: this.taskId,
          error: String(error),
        });
      }
    });
  }

  appendOutput(text: string): Promise<void> {
    return (this.#output ??= this.#newOutput()).write(text);
  }

  flushOutput(): Promise<void> {
    return this.#output === undefined ? Promise.resolve() : this.#output.flush();
  }

  loadStep(name: string): { found: boolean; value?: unknown } {
    // A timed-out attempt runs no further step: its result could not be kept anyway.
    if (this.#run.closed === true) throw closedError();
    const steps = this.#steps;
    return name in steps ? { found: true, value: steps[name] } : { found: false };
  }

  async saveStep(name: string, value: unknown): Promise<void> {
    const run = this.#run;
    if (run.closed === true) throw closedError();
    if (run.fencedOut) throw this.#fencedOut();
    const saved = await this.#retried(
      'save step',
      () => this.#settings.store.saveStep(this.taskId, name, value, run.fence),
      this.#settings.writeBudgetMs,
    );
    // A store written before fences existed resolves with nothing: that is a save.
    if ((saved as SaveStepOutcome | undefined)?.ok === false) throw this.#fencedOut();
    this.#steps[name] = value;
  }

  async sleep(n: number, ms: number): Promise<number> {
    const name = sleepStepName(n);
    const recorded = this.#steps[name] as { wakeAt?: unknown } | undefined;
    if (recorded !== undefined && typeof recorded.wakeAt === 'number') {
      return remainingSleep(recorded.wakeAt - this.#storeNow(), this.#run);
    }
    if (ms <= IN_PLACE_SLEEP_MS) return remainingSleep(ms, this.#run);
    await this.saveStep(name, { wakeAt: this.#storeNow() + ms });
    return ms;
  }

  #retried<T>(operation: string, work: () => Promise<T>, budgetMs: number): Promise<T> {
    const run = this.#run;
    if (run.leaseLost) return Promise.reject<T>(run.abort.reason);
    return withStoreRetry(work, {
      health: this.#settings.health,
      operation,
      budgetMs,
      giveUp: () => run.leaseLost,
    });
  }

  #fencedOut(): Error {
    return noteFencedOut(this.#settings.logger, this.taskId, this.#run);
  }

  #storeNow(): number {
    return this.#settings.clock() + (this.#run.storeOffsetMs ?? 0);
  }

  async #write(change: (current: TaskRecord) => TaskRecord | undefined) {
    const run = this.#run;
    if (run.closed === true) throw closedError();
    if (run.fencedOut) throw this.#fencedOut();
    const attempt = this.attempt;
    // Only this attempt may write: after a re-claim (attempt + 1) the new runner owns the task.
    const guarded = (current: TaskRecord) =>
      current.attempt === attempt ? change(current) : undefined;
    const written = await updateTask(this.#settings.store, this.taskId, guarded, {
      from: this.#latest.task,
      fence: run.fence,
    }).catch((error: unknown) => {
      throw isFencedOut(error) ? this.#fencedOut() : error;
    });
    if (written !== undefined) this.#latest.task = written;
    return written;
  }

  #newOutput(): OutputWriter {
    const run = this.#run;
    const settings = this.#settings;
    const taskId = this.taskId;
    return new OutputWriter(
      async (text) => {
        if (run.closed === true || run.fencedOut || run.leaseLost) return;
        // Chunks well under the bound, so that the oldest giving way whole keeps most of it.
        const size = Math.min(
          TEXT_CHUNK_CHARS,
          Math.max(2, Math.ceil(settings.maxOutputChars / 16)),
        );
        for (const chunk of splitText(text, size)) {
          const options = { fence: run.fence, maxChars: settings.maxOutputChars };
          const appended = await this.#retried(
            'write output',
            () => settings.store.appendText(taskId, 'output', chunk, options),
            PROGRESS_BUDGET_MS,
          );
          if (!appended.ok) throw this.#fencedOut();
        }
      },
      (error) => {
        // As for progress: never the task's failure, and store trouble is logged by `health`.
        if (!settings.health.down && !run.leaseLost && !isFencedOut(error)) {
          settings.logger.warn('output not recorded', { taskId, error: String(error) });
        }
      },
    );
  }
}

/**
 * A recorded sleep seen again: over (the store woke the task on its own clock, so what is
 * left is the estimate's error), short enough to sleep in place, or still to wait (the run that
 * recorded it stopped before its wait was set).
 */
async function remainingSleep(remainingMs: number, run: RunState): Promise<number> {
  if (remainingMs <= 0) return 0;
  if (remainingMs > IN_PLACE_SLEEP_MS) return remainingMs;
  await delay(remainingMs, undefined, { signal: run.abort.signal }).catch(() => undefined);
  return 0;
}
