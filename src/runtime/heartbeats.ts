interface Entry {
  dueAt: number;
  beat: () => void;
}

/**
 * One timer per runtime that beats every running task's heartbeat, instead of an interval of
 * each task's own (a timer made and cleared per task, however short the task). It ticks every
 * quarter period while a task runs, and beats each entry due within the next quarter: beats of
 * one entry come at most a period apart, as with a timer of its own, and an entry removed is
 * never beaten again. No task running, no timer.
 */
export class Heartbeats {
  readonly #periodMs: number;
  readonly #tickMs: number;
  readonly #entries = new Set<Entry>();
  #timer: NodeJS.Timeout | undefined;

  constructor(periodMs: number) {
    this.#periodMs = periodMs;
    this.#tickMs = Math.max(5, Math.floor(periodMs / 4));
  }

  /** Beats `beat` about every period from now on, until the returned function is called. */
  add(beat: () => void): () => void {
    const entry: Entry = { dueAt: performance.now() + this.#periodMs, beat };
    this.#entries.add(entry);
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.#tick(), this.#tickMs);
      this.#timer.unref();
    }
    return () => this.#remove(entry);
  }

  #remove(entry: Entry): void {
    this.#entries.delete(entry);
    if (this.#entries.size > 0 || this.#timer === undefined) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #tick(): void {
    const now = performance.now();
    for (const entry of this.#entries) {
      if (entry.dueAt - now > this.#tickMs) continue;
      entry.dueAt = now + this.#periodMs;
      entry.beat();
    }
  }
}
