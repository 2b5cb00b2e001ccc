import { PrincipalCounts } from './principal-counts.js';

/** A FIFO with an O(1) take: `shift()` would move every element left on each take. */
class Fifo {
  #items: string[] = [];
  #head = 0;

  get size(): number {
    return this.#items.length - this.#head;
  }

  push(item: string): void {
    this.#items.push(item);
  }

  take(): string {
    const item = this.#items[this.#head] as string;
    this.#head += 1;
    if (this.#head === this.#items.length) {
      this.#items = [];
      this.#head = 0;
    } else if (this.#head >= 1024 && this.#head * 2 >= this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }

  drain(): string[] {
    const rest = this.#items.slice(this.#head);
    this.#items = [];
    this.#head = 0;
    return rest;
  }
}

/**
 * Tasks waiting for a slot, taken round robin across principals (each principal's own in the
 * order they came), so one caller's backlog delays another caller's next task by at most one
 * start per slot. While another principal waits, a principal already running on more than half
 * of the slots is passed over. Counts each principal's running tasks for that rule.
 */
export class FairQueue {
  readonly #slots: number;
  readonly #waiting = new Map<string, Fifo>();
  /** Principals with waiting tasks, in the order their turns come. */
  readonly #turns = new Fifo();
  readonly #running = new PrincipalCounts();
  #size = 0;

  constructor(slots: number) {
    this.#slots = slots;
  }

  get size(): number {
    return this.#size;
  }

  push(taskId: string, principal: string): void {
    let queue = this.#waiting.get(principal);
    if (queue === undefined) {
      queue = new Fifo();
      this.#waiting.set(principal, queue);
      this.#turns.push(principal);
    }
    queue.push(taskId);
    this.#size += 1;
  }

  /** The next task to start (counted as running for its principal); undefined when none waits. */
  take(): { taskId: string; principal: string } | undefined {
    if (this.#size === 0) return undefined;
    let principal = this.#turns.take();
    if (this.#turns.size > 0 && this.#overHalf(principal)) {
      // At most one principal can hold more than half the slots: the next one in turn may start.
      const passed = principal;
      principal = this.#turns.take();
      this.#requeueFirst(passed);
    }
    const queue = this.#waiting.get(principal) as Fifo;
    const taskId = queue.take();
    this.#size -= 1;
    if (queue.size > 0) this.#turns.push(principal);
    else this.#waiting.delete(principal);
    this.started(principal);
    return { taskId, principal };
  }

  /** A task of `principal` holds a slot (taken from here, or started without waiting). */
  started(principal: string): void {
    this.#running.add(principal);
  }

  /** A task of `principal` gave its slot back. */
  finished(principal: string): void {
    this.#running.remove(principal);
  }

  /** Every waiting task id, and the queue left empty. */
  drain(): string[] {
    const ids: string[] = [];
    for (const queue of this.#waiting.values()) ids.push(...queue.drain());
    this.#waiting.clear();
    this.#turns.drain();
    this.#size = 0;
    return ids;
  }

  /** How many tasks each principal has waiting, without the names: for /metrics. */
  depths(): number[] {
    return [...this.#waiting.values()].map((queue) => queue.size);
  }

  #overHalf(principal: string): boolean {
    return this.#running.of(principal) * 2 > this.#slots;
  }

  /** Puts a passed-over principal back at the front of the turns: it keeps its place. */
  #requeueFirst(principal: string): void {
    const rest = this.#turns.drain();
    this.#turns.push(principal);
    for (const other of rest) this.#turns.push(other);
  }
}
