/** How often one task's output is written (and so its subscribers told) at most. */
export const OUTPUT_WRITE_INTERVAL_MS = 200;
/** Output buffered past this many characters makes `ctx.output` wait for the write. */
const BACKPRESSURE_CHARS = 256 * 1024;

/**
 * Coalesces a task's `ctx.output` calls: the first after a quiet spell is written at once, the
 * ones that follow within the interval are written together when it is over, in order. A call
 * returns once its text is buffered, unless the buffer is large: then once it was written.
 * `flush` writes what is left (the runner calls it before the outcome). A failed write is
 * reported to `onError` and the writer goes on with the next text.
 */
export class OutputWriter {
  readonly #write: (text: string) => Promise<void>;
  readonly #onError: (error: unknown) => void;
  readonly #intervalMs: number;
  #buffer: string[] = [];
  #buffered = 0;
  #inFlight: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #lastWriteAt = -Infinity;

  constructor(
    write: (text: string) => Promise<void>,
    onError: (error: unknown) => void,
    intervalMs = OUTPUT_WRITE_INTERVAL_MS,
  ) {
    this.#write = write;
    this.#onError = onError;
    this.#intervalMs = intervalMs;
  }

  async write(text: string): Promise<void> {
    if (text === '') return;
    this.#buffer.push(text);
    this.#buffered += text.length;
    if (this.#buffered < BACKPRESSURE_CHARS) {
      this.#schedule();
      return;
    }
    await this.flush();
  }

  /** Writes what is buffered now, and resolves once every write asked for so far is done. */
  async flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    while (this.#inFlight !== undefined || this.#buffer.length > 0) {
      if (this.#inFlight === undefined) this.#start();
      await this.#inFlight;
    }
  }

  #schedule(): void {
    if (this.#inFlight !== undefined || this.#timer !== undefined) return;
    const wait = this.#lastWriteAt + this.#intervalMs - Date.now();
    if (wait <= 0) {
      this.#start();
      return;
    }
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#start();
    }, wait);
  }

  #start(): void {
    if (this.#buffer.length === 0) return;
    const text = this.#buffer.join('');
    this.#buffer = [];
    this.#buffered = 0;
    this.#lastWriteAt = Date.now();
    this.#inFlight = this.#write(text)
      .catch((error: unknown) => this.#onError(error))
      .finally(() => {
        this.#inFlight = undefined;
        if (this.#buffer.length > 0) this.#schedule();
      });
  }
}
