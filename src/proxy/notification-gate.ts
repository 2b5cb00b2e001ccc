import type { Logger } from '../runtime/api.js';
import { timerDelay } from '../task/timers.js';

/**
 * How many notifications one upstream connection may hand the MCP client: `burst` at once,
 * then `perSecond`. The client validates every message against several schemas (tens of µs
 * each), so an upstream that floods notifications would otherwise cost the proxy its CPU.
 */
export interface NotificationRate {
  perSecond: number;
  burst: number;
}

export const DEFAULT_NOTIFICATION_RATE: NotificationRate = { perSecond: 100, burst: 200 };

/** Distinct notifications held back at once; past it a held-back one is dropped. */
const MAX_HELD = 256;

type Message = { method?: unknown; id?: unknown; params?: unknown };
type Burst = { startedAt: number; coalesced: number; dropped: number };
type Deliver = (message: never, extra?: never) => void;

/**
 * Which later notification makes an earlier one worthless: the same method about the same
 * thing (a progress token, a resource, a task, a request). Progress and status replace each
 * other; a list change is one change.
 */
function keyOf(message: Message): string {
  const params = (message.params ?? {}) as Record<string, unknown>;
  const about = params['progressToken'] ?? params['uri'] ?? params['taskId'] ?? params['requestId'];
  return `${String(message.method)}\u0000${about === undefined ? '' : String(about)}`;
}

function isNotification(message: unknown): message is Message {
  const m = message as Message | null;
  return m !== null && typeof m === 'object' && m.id === undefined && typeof m.method === 'string';
}

/**
 * A token bucket in front of one connection's message handler. Requests and responses always
 * pass. Notifications past the rate are coalesced: the latest one per key (see keyOf) is held
 * and delivered as the rate allows, older ones with the same key are dropped, so the last
 * progress or status of a call is never lost. One warning per burst, one summary when it ends.
 */
export class NotificationGate {
  readonly #rate: NotificationRate;
  readonly #logger: Logger;
  readonly #upstream: string;
  readonly #held = new Map<string, [unknown, unknown]>();
  #deliver: Deliver | undefined;
  #tokens: number;
  #refilledAt: number;
  #timer: NodeJS.Timeout | undefined;
  /** The timer only waits for the bucket to fill again, to tell the burst is over. */
  #timerIsQuietCheck = false;
  #burst: Burst | undefined;

  constructor(rate: NotificationRate, logger: Logger, upstream: string) {
    this.#rate = rate;
    this.#logger = logger;
    this.#upstream = upstream;
    this.#tokens = rate.burst;
    this.#refilledAt = Date.now();
  }

  /** Puts the gate in front of the handler the client installed on `transport` when it connected. */
  guard(transport: { onmessage?: unknown }): void {
    this.#deliver = transport.onmessage as Deliver | undefined;
    transport.onmessage = (message: unknown, extra: unknown) => this.#take(message, extra);
  }

  /** Drops what is held (the connection closed). */
  stop(): void {
    this.#cancelTimer();
    this.#held.clear();
  }

  #take(message: unknown, extra: unknown): void {
    if (!isNotification(message)) {
      // What was held came first: a call's last progress goes before its result.
      if (this.#held.size > 0) this.#passHeld(Number.POSITIVE_INFINITY);
      return this.#pass(message, extra);
    }
    this.#refill();
    if (this.#tokens >= 1 && this.#held.size === 0) {
      this.#tokens -= 1;
      return this.#pass(message, extra);
    }
    this.#hold(message, extra);
  }

  #pass(message: unknown, extra: unknown): void {
    this.#deliver?.(message as never, extra as never);
  }

  #refill(): void {
    const now = Date.now();
    const earned = ((now - this.#refilledAt) / 1000) * this.#rate.perSecond;
    this.#tokens = Math.min(this.#rate.burst, this.#tokens + earned);
    this.#refilledAt = now;
  }

  #hold(message: Message, extra: unknown): void {
    const burst = this.#startBurst();
    const key = keyOf(message);
    if (this.#held.has(key)) {
      burst.coalesced += 1;
      this.#held.delete(key); // re-inserted last: delivery keeps the order of the latest
    } else if (this.#held.size >= MAX_HELD) {
      burst.dropped += 1;
      return;
    }
    this.#held.set(key, [message, extra]);
    if (this.#timerIsQuietCheck) this.#cancelTimer();
    this.#schedule(1);
  }

  #startBurst(): Burst {
    if (this.#burst !== undefined) return this.#burst;
    this.#burst = { startedAt: Date.now(), coalesced: 0, dropped: 0 };
    this.#logger.warn('the upstream sends notifications faster than the proxy takes them', {
      upstream: this.#upstream,
      perSecond: this.#rate.perSecond,
      burst: this.#rate.burst,
      then: 'the latest of each kind is kept and passed on as the rate allows; older ones are dropped',
    });
    return this.#burst;
  }

  /** Flushes once the bucket holds `tokens` again. */
  #schedule(tokens: number): void {
    if (this.#timer !== undefined) return;
    const waitMs = Math.ceil(((tokens - this.#tokens) / this.#rate.perSecond) * 1000);
    this.#timerIsQuietCheck = tokens > 1;
    this.#timer = setTimeout(() => this.#flush(), timerDelay(Math.max(1, waitMs)));
    this.#timer.unref();
  }

  #cancelTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerIsQuietCheck = false;
  }

  /**
   * Passes on what the rate allows now. The burst is over once nothing is held and the bucket
   * filled up again (no notification came faster than the rate meanwhile).
   */
  #flush(): void {
    this.#timer = undefined;
    this.#timerIsQuietCheck = false;
    this.#refill();
    this.#passHeld(Math.floor(this.#tokens));
    if (this.#held.size > 0) return this.#schedule(1);
    if (this.#tokens >= this.#rate.burst) return this.#endBurst();
    this.#schedule(this.#rate.burst);
  }

  /** Passes on up to `count` held notifications, oldest first, each taking a token. */
  #passHeld(count: number): void {
    let passed = 0;
    for (const [key, [message, extra]] of this.#held) {
      if (passed >= count) break;
      passed += 1;
      this.#held.delete(key);
      this.#pass(message, extra);
    }
    this.#tokens = Math.max(0, this.#tokens - passed);
  }

  #endBurst(): void {
    const burst = this.#burst;
    if (burst === undefined) return;
    this.#burst = undefined;
    this.#logger.info('upstream notification burst over', {
      upstream: this.#upstream,
      seconds: Math.round((Date.now() - burst.startedAt) / 100) / 10,
      coalesced: burst.coalesced,
      dropped: burst.dropped,
    });
  }
}
