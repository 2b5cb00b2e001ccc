/**
 * A counting semaphore: the runs one worker process allows at once, shared by the jobs BullMQ
 * delivers and the tasks this process creates and starts itself. Waiters are served in order,
 * and `tryAcquire` never jumps the queue.
 */
export class Slots {
  readonly #capacity: number;
  readonly #waiters: Array<() => void> = [];
  #used = 0;

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
    else this.#used -= 1;
  }
}
