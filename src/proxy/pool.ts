import type { Logger } from '../runtime/api.js';
import { RpcError, RPC } from '../task/errors.js';
import { connectUpstream } from './connection.js';
import type { UpstreamConnection } from './upstream.js';
import type { NotificationRate } from './notification-gate.js';
import { describeUpstream, type UpstreamSpec } from './upstream-spec.js';
import { backoffDelayMs, type Backoff } from '../task/backoff.js';
import { FairBound, type FairTicket } from '../server/tasks/fair-bound.js';
import { timerDelay } from '../task/timers.js';

export interface PoolOptions {
  spec: UpstreamSpec;
  logger: Logger;
  version: string;
  /** Upstream calls in flight at once; each holds its own connection. */
  size: number;
  notificationRate?: NotificationRate | undefined;
}

const RECONNECT: Backoff = { backoffMs: 200, maxBackoffMs: 10_000 };

/**
 * Connections to the upstream, each lent to one call at a time. One call per connection is
 * what lets an upstream's elicitation or sampling request be matched to the call that caused
 * it (neither the stdio nor the HTTP wire says which request a server→client request belongs
 * to). The pool size is the bound on concurrent upstream calls. A connection that closed (a
 * stdio child that died) is dropped and a new one made, waiting longer after each failure.
 */
export class UpstreamPool {
  readonly #options: PoolOptions;
  readonly #idle: UpstreamConnection[] = [];
  readonly #slots: FairBound;
  readonly #lent = new Map<UpstreamConnection, FairTicket>();
  #failures = 0;
  #closed = false;

  constructor(options: PoolOptions) {
    this.#options = options;
    // The last slot is kept for a caller holding none: callers at their share leave room.
    this.#slots = new FairBound({ capacity: options.size, reserve: 1 });
  }

  /**
   * A connection of its own for a call counted against `holder` (a principal's calls take at
   * most half the slots while another principal waits, parked ones included: fair-bound.ts);
   * with `sessionId`, one that rejoins that upstream session.
   */
  async acquire(
    signal: AbortSignal,
    holder: string,
    sessionId?: string,
  ): Promise<UpstreamConnection> {
    const ticket = await this.#slots.take(holder, signal);
    try {
      const connection =
        sessionId === undefined
          ? (this.#takeIdle() ?? (await this.#connect(signal)))
          : await this.#connect(signal, sessionId);
      this.#lent.set(connection, ticket);
      return connection;
    } catch (error) {
      ticket.give();
      throw error;
    }
  }

  /** Gives a connection and its slot back. A closed one is not reused. */
  release(connection: UpstreamConnection): void {
    connection.onServerRequest = undefined;
    if (connection.closed || this.#closed) void connection.close().catch(() => undefined);
    else this.#idle.push(connection);
    const ticket = this.#lent.get(connection);
    this.#lent.delete(connection);
    ticket?.give();
  }

  async close(): Promise<void> {
    this.#closed = true;
    const idle = this.#idle.splice(0);
    await Promise.all(idle.map((c) => c.close().catch(() => undefined)));
  }

  #closedUnexpectedly(): void {
    if (this.#closed) return;
    this.#options.logger.warn('an upstream connection closed', {
      upstream: describeUpstream(this.#options.spec),
    });
  }

  #takeIdle(): UpstreamConnection | undefined {
    for (let c = this.#idle.pop(); c !== undefined; c = this.#idle.pop()) {
      if (!c.closed) return c;
    }
    return undefined;
  }

  async #connect(signal: AbortSignal, sessionId?: string): Promise<UpstreamConnection> {
    for (;;) {
      if (this.#closed) throw new RpcError(RPC.INTERNAL_ERROR, 'the proxy is stopping');
      signal.throwIfAborted();
      try {
        const connection = await connectUpstream({
          ...this.#options,
          ...(sessionId === undefined ? {} : { sessionId }),
          onClose: () => this.#closedUnexpectedly(),
        });
        this.#failures = 0;
        if (this.#closed) {
          await connection.close().catch(() => undefined);
          throw new RpcError(RPC.INTERNAL_ERROR, 'the proxy is stopping');
        }
        return connection;
      } catch (error) {
        this.#failures += 1;
        const delay = backoffDelayMs(RECONNECT, this.#failures);
        this.#options.logger.warn('cannot reach the upstream; retrying', {
          upstream: describeUpstream(this.#options.spec),
          error: (error as Error).message,
          retryInMs: delay,
        });
        await sleep(delay, signal);
      }
    }
  }
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve();
    }, timerDelay(ms));
    const abort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    signal?.addEventListener('abort', abort, { once: true });
  });
}
