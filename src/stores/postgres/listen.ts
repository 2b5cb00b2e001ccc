import type pg from 'pg';
import type { PgModule } from './driver.js';
import { quoteIdent } from './migrations.js';
import { backoffDelayMs, type Backoff } from '../../task/backoff.js';

export interface ListenerOptions {
  pg: PgModule;
  connectUrl: string;
  channel: string;
  description: string;
  onMessage(payload: string): void;
  /** Listening again after the connection was lost: notices sent meanwhile are gone. */
  onReconnect?(): void;
  warn(message: string): void;
}

const RECONNECT: Backoff = { backoffMs: 100, maxBackoffMs: 2000 };

/**
 * One dedicated connection that LISTENs on the store's channel (a pooled connection cannot:
 * LISTEN belongs to a session). When it drops it reconnects with backoff, reporting each outage
 * once; an unhandled 'error' would otherwise crash the process.
 */
export class ChannelListener {
  readonly #options: ListenerOptions;
  #client: pg.Client | undefined;
  #closed = false;
  #attempt = 0;
  #timer: NodeJS.Timeout | undefined;
  #reported = false;

  constructor(options: ListenerOptions) {
    this.#options = options;
  }

  /** Connects and listens; rejects when the first connection fails. */
  async start(): Promise<void> {
    await this.#connect();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => undefined);
  }

  async #connect(): Promise<void> {
    const client = new this.#options.pg.Client({ connectionString: this.#options.connectUrl });
    client.on('error', (error) => this.#lost(client, error));
    client.on('end', () => this.#lost(client, new Error('connection ended')));
    client.on('notification', (message) => {
      if (message.channel === this.#options.channel && message.payload !== undefined) {
        this.#options.onMessage(message.payload);
      }
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${quoteIdent(this.#options.channel)}`);
    } catch (error) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.#closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.#client = client;
  }

  #lost(client: pg.Client, error: Error): void {
    if (this.#closed || client !== this.#client) return;
    this.#client = undefined;
    client.removeAllListeners('end');
    client.end().catch(() => undefined);
    if (!this.#reported) {
      this.#reported = true;
      this.#options.warn(
        `${this.#options.description}: change events lost their connection (${error.message}); reconnecting`,
      );
    }
    this.#schedule();
  }

  #schedule(): void {
    const delay = backoffDelayMs(RECONNECT, this.#attempt + 1);
    this.#timer = setTimeout(() => {
      this.#connect().then(
        () => {
          if (this.#closed) return;
          this.#attempt = 0;
          this.#reported = false;
          this.#options.onReconnect?.();
        },
        () => {
          this.#attempt += 1;
          if (!this.#closed) this.#schedule();
        },
      );
    }, delay);
    this.#timer.unref();
  }
}
