/**
 * A counting semaphore: the runs one worker process allows at once, shared by the jobs BullMQ
 * delivers and the tasks this process creates and starts itself. Waiters are served in order,
 * and `tryAcquire` never jumps the queue.
 */
export class Slots {
  readonly #capacity: number;
  readonly #waiters: Array<() => void> = [];
  /** Those waiting for a slot to be free without taking it (`whenFree`). */
  readonly #watchers: Array<() => void> = [];
  #used = 0;
  #closed = false;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  get used(): number {
    return this.#used;
  }

  tryAcquire(): boolean {
    if (this.#used >= this.#capacity || this.#waiters.length > 0) return false;
    this.#used += 1;
    return true;
  }

  acquire(): Promise<void> {
    if (this.tryAcquire()) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Hands the slot to the first waiter, or frees it. */
  release(): void {
    const next = this.#waiters.shift();
    if (next !== undefined) next();
    else {
      this.#used -= 1;
      if (this.#watchers.length > 0) for (const watcher of this.#watchers.splice(0)) watcher();
    }
  }

  /**
   * Resolves once a slot is free (nobody queued for one), taking nothing; at once after
   * `close`, so a stop never waits for a slot.
   */
  whenFree(): Promise<void> {
    if (this.#closed || (this.#used < this.#capacity && this.#waiters.length === 0)) {
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#watchers.push(resolve));
  }

  close(): void {
    this.#closed = true;
    for (const watcher of this.#watchers.splice(0)) watcher();
  }
}
