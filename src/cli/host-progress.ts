import ora, { type Ora } from 'ora';
import { isFinal, type TaskEvent } from '../client/index.js';

/**
 * The live status line of `call`, `tasks wait` and `tasks resume`, on standard error so that
 * standard output carries only the result. On a terminal an `ora` spinner shows the latest
 * `statusMessage`; otherwise each change is one plain line.
 */
export class ProgressLine {
  readonly #stream: NodeJS.WriteStream;
  readonly #spinner: Ora | undefined;
  #last = '';

  constructor(stream: NodeJS.WriteStream = process.stderr) {
    this.#stream = stream;
    this.#spinner = stream.isTTY === true ? ora({ stream, discardStdin: false }) : undefined;
  }

  readonly onEvent = (event: TaskEvent): void => {
    if (event.type === 'status') {
      // An ended task's message is printed once, with its outcome.
      const message =
        event.statusMessage === undefined || isFinal(event.status)
          ? ''
          : `: ${event.statusMessage}`;
      this.#show(`${event.taskId} ${event.status}${message}`);
    } else if (event.type === 'input') {
      this.note(`${event.taskId} answered ${event.keys.join(', ')}`);
    } else {
      this.note(`${event.taskId} cancel requested, waiting for the server to stop it`);
    }
  };

  /** A permanent line (kept above the spinner). */
  note(text: string): void {
    this.above(() => this.#stream.write(`${text}\n`));
  }

  /** True when the line is a spinner on a terminal (what is written above it must end lines). */
  get live(): boolean {
    return this.#spinner !== undefined;
  }

  /** Writes something (to any stream of the same terminal) above the spinner. */
  above(write: () => void): void {
    const spinning = this.#spinner?.isSpinning === true;
    if (spinning) this.#spinner?.stop();
    write();
    if (spinning) this.#spinner?.start();
  }

  /** Clears the spinner while the terminal is needed for a prompt. */
  pause(): void {
    this.#spinner?.stop();
  }

  resume(): void {
    if (this.#spinner !== undefined && this.#last !== '') this.#spinner.start(this.#last);
  }

  stop(): void {
    this.#spinner?.stop();
  }

  #show(text: string): void {
    if (text === this.#last) return;
    this.#last = text;
    if (this.#spinner === undefined) this.#stream.write(`${text}\n`);
    else if (this.#spinner.isSpinning) this.#spinner.text = text;
    else this.#spinner.start(text);
  }
}
