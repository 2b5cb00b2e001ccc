import { createHash } from 'node:crypto';
import { PrincipalCounts } from '../../runtime/principal-counts.js';

/**
 * A principal's mark on its jobs: a short digest, so job rows and Redis keys never hold a
 * principal's name. PostgreSQL's enqueue trigger computes the same (`left(md5(principal), 16)`).
 */
export function fairTag(principal: string): string {
  return createHash('md5').update(principal).digest('hex').slice(0, 16);
}

/** How far into the queue a worker looks for another principal's job: a few jobs per slot. */
export function peekDepth(slots: number): number {
  return Math.max(32, 4 * slots);
}

/**
 * Fair share's more-than-half rule for one worker of a fleet. Job engines hand out jobs by
 * priority across every worker; each worker then keeps to: while a job of another principal
 * waits in the queue, a principal gets a further slot here only if it then holds at most half
 * of this worker's slots (one slot it may always have). Every worker keeping to half of its own
 * slots keeps the principal within half of the fleet's, with counts that are exact and local
 * (no shared counter to race on or to leak when a worker dies).
 */
export class FairGate {
  readonly slots: number;
  readonly #held = new PrincipalCounts();

  constructor(slots: number) {
    this.slots = slots;
  }

  /** A job of `tag` holds a slot here (jobs without a tag are not counted). */
  took(tag: string | undefined): void {
    if (tag !== undefined) this.#held.add(tag);
  }

  gaveBack(tag: string | undefined): void {
    if (tag !== undefined) this.#held.remove(tag);
  }

  /** Whether another slot would give `tag` more than half of this worker's. */
  isFull(tag: string | undefined): boolean {
    if (tag === undefined) return false;
    const held = this.#held.of(tag);
    return held > 0 && (held + 1) * 2 > this.slots;
  }

  /** The tags that may take no further slot here while another principal's job waits. */
  fullTags(): string[] {
    return this.#held.holders().filter((tag) => this.isFull(tag));
  }

  /**
   * Whom a job of `tag` stands back for: when its principal is full here, the index in `ahead`
   * (the tags of the next jobs in the queue, in the order they are handed out) of the first job
   * of a principal that is not; else -1. Untagged jobs (a recovery scan's) never stand back and
   * are not counted as another principal's.
   */
  standsBackFor(tag: string | undefined, ahead: readonly (string | undefined)[]): number {
    return this.isFull(tag) ? ahead.findIndex((other) => this.#mayTake(other)) : -1;
  }

  /**
   * The tags whose jobs should be passed over in the next fetch: the full ones, when `ahead`
   * holds a job of a principal that is not full; none otherwise (a full principal alone in the
   * queue takes every slot).
   */
  tagsToPassOver(ahead: readonly (string | undefined)[]): string[] {
    const full = this.fullTags();
    return full.length > 0 && ahead.some((other) => this.#mayTake(other)) ? full : [];
  }

  /** Whether a job of `tag` could start here now whoever waits. */
  #mayTake(tag: string | undefined): boolean {
    return tag !== undefined && !this.isFull(tag);
  }
}

/** How long a look into the queue that found nobody else's job stands for the next ones. */
export const QUIET_LOOK_MS = 25;

/**
 * Spares a principal alone in the queue a look per job: after a look found no job of a
 * principal that could take a slot, the next looks within `QUIET_LOOK_MS` take that answer, as
 * long as the same principals are full. A principal whose jobs arrive meanwhile and whose
 * priority does not already put them first waits that much longer for the slot it is owed. A
 * busy worker then looks about 40 times a second instead of once per job (more while several
 * slots start together, each looking before the first look's answer is back).
 */
export class QuietLook {
  readonly #quietMs: number;
  readonly #now: () => number;
  #until = -Infinity;
  #full = '';

  constructor(quietMs = QUIET_LOOK_MS, now: () => number = () => performance.now()) {
    this.#quietMs = quietMs;
    this.#now = now;
  }

  /** Whether a recent look already found nobody else's job while `full` were full. */
  foundNobodyLately(full: readonly string[]): boolean {
    return this.#now() < this.#until && fullKey(full) === this.#full;
  }

  /** A look found nobody else's job while `full` were full. */
  foundNobody(full: readonly string[]): void {
    this.#until = this.#now() + this.#quietMs;
    this.#full = fullKey(full);
  }
}

const fullKey = (full: readonly string[]): string =>
  full.length === 1 ? (full[0] as string) : [...full].sort().join(' ');
