import { ANONYMOUS } from './principal.js';

/**
 * One server-wide bound shared fairly across callers (sessions, waiting `tasks/result`
 * requests, busy connections, task streams, the proxy's upstream calls): a count per holder
 * key plus the total cap. A key may hold at most `share` units (half the capacity, at least
 * one) so that another caller always finds room; with `lend`, a key may go past its share
 * while no other key holds or waits, for bounds whose units can be taken back (idle sessions).
 * A refused take holds nothing; every unit taken is given back exactly once by its ticket.
 */
export type FairRefusal = 'share' | 'full';

export interface FairBoundOptions {
  capacity: number;
  /** A key alone may go past its share (its units must be reclaimable). Default false. */
  lend?: boolean;
  /**
   * The last this-many free units go only to a key that holds none, so that two callers at
   * their share still leave room for a third (units that cannot be taken back: the proxy's
   * stalled upstream calls). Default 0; less than the capacity.
   */
  reserve?: number;
}

/** A held unit: `give()` returns it (a second call does nothing). */
export interface FairTicket {
  readonly key: string;
  give(): void;
}

interface Waiter {
  key: string;
  wake: (ticket: FairTicket) => void;
}

export class FairBound {
  readonly capacity: number;
  readonly share: number;
  readonly #lend: boolean;
  readonly #reserve: number;
  readonly #held = new Map<string, number>();
  readonly #waiters: Waiter[] = [];
  #total = 0;

  constructor(options: FairBoundOptions) {
    if (!Number.isInteger(options.capacity) || options.capacity < 1) {
      throw new RangeError(
        `a bound's capacity must be a whole number ≥ 1, not ${options.capacity}`,
      );
    }
    this.capacity = options.capacity;
    this.share = Math.max(1, Math.floor(options.capacity / 2));
    this.#lend = options.lend === true;
    this.#reserve = Math.min(options.reserve ?? 0, options.capacity - 1);
  }

  get total(): number {
    return this.#total;
  }

  heldBy(key: string): number {
    return this.#held.get(key) ?? 0;
  }

  /** The key holding the most units, and how many (undefined when nothing is held). */
  largest(): { key: string; held: number } | undefined {
    let top: { key: string; held: number } | undefined;
    for (const [key, held] of this.#held)
      if (top === undefined || held > top.held) top = { key, held };
    return top;
  }

  /** Why `key` cannot take one more unit now, or undefined when it can. */
  refusal(key: string): FairRefusal | undefined {
    const own = this.heldBy(key);
    if (own >= this.share && !(this.#lend && this.#alone(key))) return 'share';
    if (this.#total >= this.capacity) return 'full';
    if (own > 0 && this.capacity - this.#total <= this.#reserve) return 'share';
    return undefined;
  }

  /** A unit for `key` now, or why not (nothing is held then). */
  tryTake(key: string): FairTicket | FairRefusal {
    const refused = this.refusal(key);
    return refused ?? this.#grant(key);
  }

  /**
   * A unit for `key`, waiting while it is refused; waiters are served in arrival order, each
   * skipped while its key is at its share. Rejects with the signal's reason on abort.
   */
  take(key: string, signal: AbortSignal): Promise<FairTicket> {
    signal.throwIfAborted();
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        key,
        wake: (granted) => {
          signal.removeEventListener('abort', abort);
          resolve(granted);
        },
      };
      const abort = () => {
        const index = this.#waiters.indexOf(waiter);
        if (index >= 0) this.#waiters.splice(index, 1);
        reject(signal.reason as Error);
        this.#serveWaiters();
      };
      signal.addEventListener('abort', abort, { once: true });
      this.#waiters.push(waiter);
      this.#serveWaiters();
    });
  }

  #alone(key: string): boolean {
    for (const other of this.#held.keys()) if (other !== key) return false;
    return this.#waiters.every((waiter) => waiter.key === key);
  }

  #grant(key: string): FairTicket {
    this.#held.set(key, this.heldBy(key) + 1);
    this.#total += 1;
    let given = false;
    return {
      key,
      give: () => {
        if (given) return;
        given = true;
        this.#give(key);
      },
    };
  }

  #give(key: string): void {
    const left = this.heldBy(key) - 1;
    if (left <= 0) this.#held.delete(key);
    else this.#held.set(key, left);
    this.#total -= 1;
    this.#serveWaiters();
  }

  #serveWaiters(): void {
    for (let i = 0; i < this.#waiters.length && this.#total < this.capacity;) {
      const waiter = this.#waiters[i] as Waiter;
      if (this.refusal(waiter.key) !== undefined) {
        i += 1;
        continue;
      }
      this.#waiters.splice(i, 1);
      waiter.wake(this.#grant(waiter.key));
    }
  }
}

/**
 * The key a caller's units are counted under: its principal; the anonymous principal of a
 * server without auth is split by `scope` (its connection or its session), since every
 * caller of such a server is "anonymous" and a client address says nothing on loopback.
 */
export function fairKeyOf(principal: string, scope: string | undefined): string {
  return principal === ANONYMOUS && scope !== undefined ? `${ANONYMOUS}#${scope}` : principal;
}

/** What a refused caller is told, the same for every bound (docs/operations.md "Fair bounds"). */
export interface FairRefusalAnswer {
  /** 429: the caller is at its share; 503: the whole bound is in use by several callers. */
  httpStatus: 429 | 503;
  retryAfterSeconds: number;
  message: string;
  data: { bound: string; capacity: number; share: number; reason: FairRefusal };
}

export function describeRefusal(
  what: string,
  refusal: FairRefusal,
  bound: FairBound,
  retryAfterSeconds = 1,
): FairRefusalAnswer {
  const message =
    refusal === 'share'
      ? `Too many ${what} for one caller: at most ${bound.share} of the server's ` +
        `${bound.capacity} while others use it; finish or close one of yours, or retry later`
      : `All ${bound.capacity} ${what} of this server are in use; retry later`;
  return {
    httpStatus: refusal === 'share' ? 429 : 503,
    retryAfterSeconds,
    message,
    data: { bound: what, capacity: bound.capacity, share: bound.share, reason: refusal },
  };
}
