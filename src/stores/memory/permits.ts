import type { PermitOutcome, PermitRequest } from '../../store/port.js';
import {
  assertPermitLimit,
  assertPermitRequest,
  byCreation,
  decidePermit,
  wakeable,
  type PermitWaiter,
} from '../shared/permits.js';

/** What the permits of the memory store read of its tasks and leases. */
export interface PermitFacts {
  /** Whether `token` is the task's lease and has not run out. */
  leaseLive(taskId: string, token: string): boolean;
  /** Whether the task still exists and is `working` (a waiter that counts). */
  working(taskId: string): boolean;
  /** Drops a live lease as a hand-back does. */
  dropLease(taskId: string): void;
}

/** The memory store's permits: per key, the holders' lease tokens and the waiters. */
export class MemoryPermits {
  readonly #held = new Map<string, Map<string, string>>();
  readonly #waiting = new Map<string, PermitWaiter[]>();

  constructor(private readonly facts: PermitFacts) {}

  acquire(request: PermitRequest): PermitOutcome {
    assertPermitRequest(request);
    const { key, taskId, token } = request;
    if (!this.facts.leaseLive(taskId, token)) return { granted: false, wake: [] };
    const held = this.#liveHolders(key);
    if (held.get(taskId) === token) {
      this.#dropWaiter(key, taskId);
      return { granted: true, wake: [] };
    }
    held.delete(taskId);
    const decision = decidePermit({ held: held.size, waiters: this.#liveWaiters(key) }, request);
    if (decision.granted) {
      held.set(taskId, token);
      this.#dropWaiter(key, taskId);
      return decision;
    }
    this.#addWaiter(key, { taskId, createdAt: request.createdAt });
    if (request.releaseOnRefusal === true) this.facts.dropLease(taskId);
    return decision;
  }

  release(key: string, limit: number, taskId: string, token: string): string[] {
    assertPermitLimit(limit);
    const held = this.#liveHolders(key);
    if (held.get(taskId) === token) held.delete(taskId);
    return wakeable(this.#liveWaiters(key), limit - held.size);
  }

  /** The key's holders whose lease is still live (the others are dropped). */
  #liveHolders(key: string): Map<string, string> {
    let held = this.#held.get(key);
    if (held === undefined) this.#held.set(key, (held = new Map()));
    for (const [taskId, token] of held) {
      if (!this.facts.leaseLive(taskId, token)) held.delete(taskId);
    }
    return held;
  }

  #liveWaiters(key: string): PermitWaiter[] {
    const waiters = (this.#waiting.get(key) ?? []).filter((w) => this.facts.working(w.taskId));
    this.#waiting.set(key, waiters);
    return waiters;
  }

  #addWaiter(key: string, waiter: PermitWaiter): void {
    const waiters = this.#liveWaiters(key).filter((w) => w.taskId !== waiter.taskId);
    waiters.push(waiter);
    waiters.sort(byCreation);
    this.#waiting.set(key, waiters);
  }

  #dropWaiter(key: string, taskId: string): void {
    const waiters = this.#waiting.get(key);
    if (waiters !== undefined)
      this.#waiting.set(
        key,
        waiters.filter((w) => w.taskId !== taskId),
      );
  }
}
