import { TaskrailClientError } from './errors.js';
import type { CallOutcome } from './outcome.js';
import type { TaskWatch } from './task-watch.js';

/**
 * What `callTool` hands back. In background mode (the default) it exists as soon as the server
 * answered; `result()` waits for the end. A synchronous call resolves only once `outcome` is set.
 */
export interface ToolCall {
  /** The server's task id, or undefined when the server answered directly. */
  readonly taskId: string | undefined;
  /** Set once the call has ended. */
  readonly outcome: CallOutcome | undefined;
  /** Waits for the end (polling the task if there is one). */
  result(): Promise<CallOutcome>;
  /** Sends `tasks/cancel`, then waits until the server reports a terminal status. */
  cancel(): Promise<CallOutcome>;
  /** Stops watching in this process; the task keeps running and stays in the ledger. */
  detach(): void;
}

export function settledCall(outcome: CallOutcome): ToolCall {
  const taskId = 'taskId' in outcome ? outcome.taskId : undefined;
  return {
    taskId,
    outcome,
    result: () => Promise.resolve(outcome),
    cancel: () => Promise.resolve(outcome),
    detach: () => undefined,
  };
}

/** A handle on a task being watched by a `TaskWatch`; the watch starts at once. */
export class WatchedCall implements ToolCall {
  readonly taskId: string;
  #outcome: CallOutcome | undefined;
  readonly #watch: TaskWatch;
  readonly #controller = new AbortController();
  readonly #running: Promise<CallOutcome>;

  constructor(watch: TaskWatch, signal?: AbortSignal) {
    this.taskId = watch.taskId;
    this.#watch = watch;
    if (signal !== undefined) {
      if (signal.aborted) this.#controller.abort(signal.reason);
      else signal.addEventListener('abort', () => this.detach(), { once: true });
    }
    this.#running = watch.run(this.#controller.signal).then(
      (outcome) => (this.#outcome = outcome),
      (error: unknown) => {
        if (this.#controller.signal.aborted) {
          throw new TaskrailClientError(
            'USAGE',
            `stopped watching task ${this.taskId} (it keeps running)`,
          );
        }
        throw error;
      },
    );
    // The caller may never ask for the result; a failure must not become an unhandled rejection.
    this.#running.catch(() => undefined);
  }

  get outcome(): CallOutcome | undefined {
    return this.#outcome;
  }

  result(): Promise<CallOutcome> {
    return this.#running;
  }

  async cancel(): Promise<CallOutcome> {
    if (this.#outcome === undefined) await this.#watch.requestCancel(this.#controller.signal);
    return this.#running;
  }

  detach(): void {
    this.#controller.abort(new TaskrailClientError('USAGE', 'detached'));
  }
}
