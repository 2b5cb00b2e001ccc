import type { PermitAsk, TaskStore } from '../store/port.js';
import type { DispatchHint } from './api.js';
import { RpcError } from '../task/errors.js';

/** Unfinished tasks one principal may have at once unless configured (`--max-queued-per-principal`). */
export const DEFAULT_MAX_QUEUED_PER_PRINCIPAL = 10_000;

/** What a refused create tells the caller to wait before trying again (HTTP `Retry-After`). */
export const QUEUE_FULL_RETRY_AFTER_SECONDS = 2;

/** JSON-RPC's "limit reached" server error (`SERVER_ERROR.LIMIT_REACHED` of the protocol layer). */
const LIMIT_REACHED = -32000;

/** A create refused because its caller already has the most unfinished tasks allowed. */
export class QueueFullError extends RpcError {
  constructor(maxQueuedPerPrincipal: number) {
    super(
      LIMIT_REACHED,
      `Too many unfinished tasks: this caller already has ${maxQueuedPerPrincipal} working or ` +
        `input_required tasks (the most allowed); retry after some of them finish`,
      { maxQueuedPerPrincipal, retryAfterSeconds: QUEUE_FULL_RETRY_AFTER_SECONDS },
    );
    this.name = 'QueueFullError';
  }
}

export function isQueueFull(error: unknown): error is QueueFullError {
  return error instanceof QueueFullError;
}

/** Checks a cap given to the runtime: a positive whole number. */
export function checkQueueCap(max: number): number {
  if (!Number.isSafeInteger(max) || max < 1) {
    throw new RangeError(`maxQueuedPerPrincipal must be a positive integer, got ${max}`);
  }
  return max;
}

/** How long a count read for the cap may stand in for new reads of the same principal. */
const COUNT_REUSE_MS = 1000;
/** Principals whose last count is remembered at most; past it, all are forgotten. */
const MAX_REMEMBERED = 10_000;

interface Remembered {
  unfinished: number;
  /** Creates admitted on this count without reading again. */
  spent: number;
  readAt: number;
}

/**
 * The per-principal cap on creates. A store count can cost O(unfinished tasks) (Redis,
 * PostgreSQL), so one count admits, for up to a second, a quarter of the room it showed
 * without reading again: four processes doing so still stay under the cap, and near the cap
 * (room under 4) every create reads. Creates that race at the edge can pass it by one each.
 */
export class QueueCap {
  readonly #store: TaskStore;
  readonly #max: number;
  readonly #seen = new Map<string, Remembered>();
  readonly #reading = new Map<string, Promise<number>>();

  constructor(store: TaskStore, max: number) {
    this.#store = store;
    this.#max = checkQueueCap(max);
  }

  /**
   * Refuses (QueueFullError) a create that would give `principal` more than the cap; else the
   * task's place among the principal's unfinished ones, itself included (undefined when the
   * store cannot count).
   */
  async admit(principal: string): Promise<number | undefined> {
    if (this.#store.countUnfinished === undefined) return undefined;
    const reused = this.#reuse(principal);
    if (reused !== undefined) return reused;
    // Creates arriving together share one read; each is then admitted on its own.
    let reading = this.#reading.get(principal);
    if (reading === undefined) {
      reading = this.#read(principal).finally(() => this.#reading.delete(principal));
      this.#reading.set(principal, reading);
      const unfinished = await reading;
      return this.#admitOn(principal, unfinished);
    }
    await reading.catch(() => undefined);
    return this.#reuse(principal) ?? this.admit(principal);
  }

  /** The next place on a recent count, while its quarter of the room lasts. */
  #reuse(principal: string): number | undefined {
    const known = this.#seen.get(principal);
    if (known === undefined || Date.now() - known.readAt >= COUNT_REUSE_MS) return undefined;
    if (known.spent >= Math.floor((this.#max - known.unfinished) / 4)) return undefined;
    known.spent += 1;
    return known.unfinished + known.spent;
  }

  async #read(principal: string): Promise<number> {
    const count = this.#store.countUnfinished as (p: string, atMost: number) => Promise<number>;
    return count.call(this.#store, principal, this.#max);
  }

  #admitOn(principal: string, unfinished: number): number {
    if (unfinished >= this.#max) throw new QueueFullError(this.#max);
    if (this.#seen.size >= MAX_REMEMBERED) this.#seen.clear();
    this.#seen.set(principal, { unfinished: unfinished + 1, spent: 0, readAt: Date.now() });
    return unfinished + 1;
  }
}

/** The dispatch hint of a new task: its caller, and its place among the caller's unfinished. */
export function hintOf(
  principal: string,
  position: number | undefined,
  permit?: PermitAsk,
): DispatchHint {
  const hint: DispatchHint = position === undefined ? { principal } : { principal, position };
  if (permit !== undefined) hint.permit = permit;
  return hint;
}
