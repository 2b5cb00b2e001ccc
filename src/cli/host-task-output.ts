import { isShortened, type CallOutcome, type TaskrailClient } from '../client/index.js';
import type { ProgressLine } from './host-progress.js';

/**
 * Prints a task's output on standard output as it grows, above the progress line. On a
 * terminal only whole lines are written while the spinner runs (a partial line would be drawn
 * over); the rest comes with `finish`. A server that keeps no output for the task prints
 * nothing: following it is best effort and never fails the command.
 */
export class OutputPrinter {
  readonly #stop = new AbortController();
  readonly #ended = new AbortController();
  readonly #running: Promise<void>;
  readonly #progress: ProgressLine | undefined;
  #pending = '';

  constructor(client: TaskrailClient, taskId: string, progress?: ProgressLine) {
    this.#progress = progress;
    this.#running = this.#print(client, taskId).catch(() => undefined);
  }

  async #print(client: TaskrailClient, taskId: string): Promise<void> {
    for await (const chunk of client.resources.followOutput(taskId, {
      signal: this.#stop.signal,
      wake: this.#ended.signal,
    }))
      this.#write(chunk);
  }

  #write(chunk: string): void {
    if (this.#progress?.live !== true) {
      process.stdout.write(chunk);
      return;
    }
    const text = this.#pending + chunk;
    const cut = text.lastIndexOf('\n') + 1;
    this.#pending = text.slice(cut);
    if (cut > 0) this.#progress.above(() => process.stdout.write(text.slice(0, cut)));
  }

  /** Stops following at once (the command is ending another way). */
  stop(): void {
    this.#stop.abort();
  }

  /** Waits for the last of the output of an ended task (`drain`), or stops following at once. */
  async finish(drain: boolean): Promise<void> {
    if (drain) this.#ended.abort();
    else this.#stop.abort();
    await this.#running;
    if (this.#pending !== '') process.stdout.write(`${this.#pending}\n`);
    this.#pending = '';
  }
}

/** The outcome with a shortened result read whole, for printing as text. */
export async function withWholeResult(
  client: TaskrailClient,
  outcome: CallOutcome,
): Promise<CallOutcome> {
  if (outcome.kind !== 'completed' && outcome.kind !== 'tool_error') return outcome;
  if (!isShortened(outcome.result)) return outcome;
  try {
    return { ...outcome, result: await client.resources.wholeResult(outcome.result) };
  } catch (error) {
    process.stderr.write(
      `taskrail: the result was shortened and its whole text could not be read (${(error as Error).message}); printing it as the server gave it\n`,
    );
    return outcome;
  }
}
