import type { Logger } from '../runtime/api.js';
import { RpcError, RPC } from '../task/errors.js';
import { connectUpstream } from './connection.js';
import type { UpstreamConnection } from './upstream.js';
import type { NotificationRate } from './notification-gate.js';
import { describeUpstream, type UpstreamSpec } from './upstream-spec.js';
import { backoffDelayMs, type Backoff } from '../task/backoff.js';

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
  readonly #waiters: (() => void)[] = [];
  #lent = 0;
  #failures = 0;
  #closed = false;

  constructor(options: PoolOptions) {
    this.#options = options;
  }

  /** A connection of its own; with `sessionId`, one that rejoins that upstream session. */
  async acquire(signal: AbortSignal, sessionId?: string): Promise<UpstreamConnection> {
    while (this.#lent >= this.#options.size) {
      await this.#waitForSlot(signal);
    }
    this.#lent += 1;
    try {
      if (sessionId !== undefined) return await this.#connect(signal, sessionId);
      return this.#takeIdle() ?? (await this.#connect(signal));
    } catch (error) {
      this.release(undefined);
      throw error;
    }
  }

  /** Gives a connection back (undefined: the slot only). A closed one is not reused. */
  release(connection: UpstreamConnection | undefined): void {
    this.#lent -= 1;
    if (connection !== undefined) {
      connection.onServerRequest = undefined;
      if (connection.closed || this.#closed) void connection.close().catch(() => undefined);
      else this.#idle.push(connection);
    }
    this.#waiters.shift()?.();
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

  #waitForSlot(signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const wake = () => {
        signal.removeEventListener('abort', abort);
        resolve();
      };
      const abort = () => {
        const index = this.#waiters.indexOf(wake);
        if (index >= 0) this.#waiters.splice(index, 1);
        reject(signal.reason as Error);
      };
      if (signal.aborted) return abort();
      signal.addEventListener('abort', abort, { once: true });
      this.#waiters.push(wake);
    });
  }
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve();
    }, ms);
    const abort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    signal?.addEventListener('abort', abort, { once: true });
  });
}
