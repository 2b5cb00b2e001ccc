import { setTimeout as sleep } from 'node:timers/promises';
import { runResourceListen, type ListenConnection } from './listen-stream.js';
import { backoffDelayMs, type Backoff } from '../task/backoff.js';

const RESUBSCRIBE: Backoff = { backoffMs: 200, maxBackoffMs: 5000 };
const GIVE_UP_AFTER = 3;

/**
 * One resource followed over a `subscriptions/listen` stream (`resourceSubscriptions`, the
 * 2026-07-28 wire). `changed` resolves on the next `notifications/resources/updated` for it,
 * or after the poll time; an update that arrived while nobody waited is kept for the next
 * wait. A server that refuses the stream, or breaks it three times unacknowledged, is polled.
 */
export class ResourcePush {
  readonly #controller = new AbortController();
  #dirty = false;
  #live = false;
  #waiters = new Set<() => void>();

  constructor(conn: ListenConnection, uri: string) {
    void this.#run(conn, uri);
  }

  /** True while the server acknowledged the subscription and the stream is open. */
  get live(): boolean {
    return this.#live;
  }

  changed(ms: number, signal?: AbortSignal): Promise<void> {
    if (this.#dirty) {
      this.#dirty = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.#waiters.delete(done);
        signal?.removeEventListener('abort', done);
        this.#dirty = false;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#waiters.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  close(): void {
    this.#controller.abort();
    for (const waiter of [...this.#waiters]) waiter();
  }

  #wake(): void {
    this.#dirty = true;
    for (const waiter of [...this.#waiters]) waiter();
  }

  async #run(conn: ListenConnection, uri: string): Promise<void> {
    const signal = this.#controller.signal;
    let failures = 0;
    while (!signal.aborted) {
      let acked = false;
      let refused = false;
      const end = await runResourceListen(
        conn,
        [uri],
        {
          acknowledged: (granted) => {
            acked = true;
            failures = 0;
            // A server that acknowledges the stream without the resource will not push it.
            if (!granted.includes(uri)) refused = true;
            else this.#live = true;
            // Whatever grew before the ack is read once more.
            this.#wake();
            if (refused) this.#controller.abort();
          },
          updated: (updated) => {
            if (updated === uri) this.#wake();
          },
        },
        signal,
      );
      this.#live = false;
      // `complete`: the server ended the stream, every followed task has ended.
      if (refused || end.kind !== 'broken') return;
      if (!acked && ++failures >= GIVE_UP_AFTER) return;
      this.#wake();
      await sleep(backoffDelayMs(RESUBSCRIBE, failures + 1), undefined, { ref: false }).catch(
        () => undefined,
      );
    }
  }
}
