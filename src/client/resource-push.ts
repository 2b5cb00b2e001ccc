import { setTimeout as sleep } from 'node:timers/promises';
import { runResourceListen, type ListenConnection } from './listen-stream.js';
import { PushNotes, type OutputPush, type PushNote } from './push-notes.js';
import { backoffDelayMs, type Backoff } from '../task/backoff.js';

const RESUBSCRIBE: Backoff = { backoffMs: 200, maxBackoffMs: 5000 };
const GIVE_UP_AFTER = 3;

/**
 * One resource followed over a `subscriptions/listen` stream (`resourceSubscriptions`, the
 * 2026-07-28 wire): ready once the server acknowledged it, then a note per
 * `notifications/resources/updated` (with the length it said), `ended` when the server ends the
 * stream because the task ended. A stream that breaks is opened again (what it missed is read
 * once: `unsure`); a server that refuses it, or breaks it three times unacknowledged, is polled.
 */
export class ResourcePush implements OutputPush {
  readonly #controller = new AbortController();
  readonly #notes = new PushNotes();

  constructor(conn: ListenConnection, uri: string) {
    void this.#run(conn, uri);
  }

  ready(signal?: AbortSignal): Promise<boolean> {
    return this.#notes.ready(signal);
  }

  next(ms: number, signal?: AbortSignal): Promise<PushNote | undefined> {
    return this.#notes.next(ms, signal);
  }

  close(): void {
    this.#controller.abort();
    this.#notes.settle(false);
    this.#notes.wakeAll();
  }

  async #run(conn: ListenConnection, uri: string): Promise<void> {
    const signal = this.#controller.signal;
    let failures = 0;
    let everAcked = false;
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
            refused = !granted.includes(uri);
            // Whatever grew while a broken stream was opened again is read once more.
            if (everAcked && !refused) this.#notes.add({ unsure: true });
            everAcked = true;
            this.#notes.settle(!refused);
            if (refused) this.#controller.abort();
          },
          updated: (updated, meta) => {
            if (updated === uri) this.#notes.updated(meta);
          },
        },
        signal,
      );
      if (signal.aborted) return;
      // `complete`: the server ended the stream, every followed task has ended and was told.
      if (end.kind === 'complete') return this.#notes.add({ ended: true });
      if (refused || end.kind !== 'broken' || (!acked && ++failures >= GIVE_UP_AFTER)) {
        this.#notes.settle(false);
        return this.#notes.add({ lost: true });
      }
      await sleep(backoffDelayMs(RESUBSCRIBE, failures + 1), undefined, { ref: false }).catch(
        () => undefined,
      );
    }
  }
}
