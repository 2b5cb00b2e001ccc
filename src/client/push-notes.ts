import { timerDelay } from '../task/timers.js';
/** The `_meta` keys of a taskrail server's `notifications/resources/updated` (text-total.ts). */
const TOTAL_META = 'taskrail/total';
const ENDED_META = 'taskrail/ended';

/** What a push of a task text's growth said since the follower last looked. */
export interface PushNote {
  /** The text's length the server last told (UTF-16 code units), when it told one. */
  total?: number;
  /** An update said nothing of the length, or updates may have been missed: read to know. */
  unsure: boolean;
  /** No update follows: the task ended (or the subscription was fulfilled). */
  ended: boolean;
  /** Push stopped (the stream broke for good): poll from here on. */
  lost: boolean;
}

/** A subscription to one task resource, on whichever wire (resource-push*.ts). */
export interface OutputPush {
  /** True once the server confirmed the subscription; false when it will not push it. */
  ready(signal?: AbortSignal): Promise<boolean>;
  /** What was pushed since the last call, waiting up to `ms` for something (undefined: nothing). */
  next(ms: number, signal?: AbortSignal): Promise<PushNote | undefined>;
  close(): void;
}

const QUIET: PushNote = { unsure: false, ended: false, lost: false };

/**
 * The notes of one subscription as they arrive, kept merged until the follower takes them, and
 * its readiness. The wire-specific pushes feed it.
 */
export class PushNotes {
  #note: PushNote | undefined;
  #waiters = new Set<() => void>();
  #ready: Promise<boolean>;
  #settleReady!: (ready: boolean) => void;

  constructor() {
    this.#ready = new Promise((resolve) => (this.#settleReady = resolve));
  }

  /** The subscription is confirmed (true) or refused (false); later calls change nothing. */
  settle(ready: boolean): void {
    this.#settleReady(ready);
    if (!ready) this.add({ lost: true });
  }

  ready(signal?: AbortSignal): Promise<boolean> {
    if (signal === undefined) return this.#ready;
    return Promise.race([
      this.#ready,
      new Promise<boolean>((resolve) =>
        signal.addEventListener('abort', () => resolve(false), { once: true }),
      ),
    ]);
  }

  /** One `notifications/resources/updated`, by its `_meta`. */
  updated(meta: Record<string, unknown> | undefined): void {
    const total = meta?.[TOTAL_META];
    this.add({
      ...(Number.isSafeInteger(total) ? { total: total as number } : { unsure: true }),
      ended: meta?.[ENDED_META] === true,
    });
  }

  add(note: Partial<PushNote>): void {
    const was = this.#note ?? QUIET;
    const total = Math.max(was.total ?? -1, note.total ?? -1);
    this.#note = {
      ...(total < 0 ? {} : { total }),
      unsure: was.unsure || note.unsure === true,
      ended: was.ended || note.ended === true,
      lost: was.lost || note.lost === true,
    };
    for (const waiter of [...this.#waiters]) waiter();
  }

  next(ms: number, signal?: AbortSignal): Promise<PushNote | undefined> {
    if (this.#note !== undefined || signal?.aborted === true) return Promise.resolve(this.#take());
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.#waiters.delete(done);
        signal?.removeEventListener('abort', done);
        resolve(this.#take());
      };
      const timer = setTimeout(done, timerDelay(ms));
      this.#waiters.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  /** Wakes every waiter with whatever is there (the follower is stopping). */
  wakeAll(): void {
    for (const waiter of [...this.#waiters]) waiter();
  }

  #take(): PushNote | undefined {
    const note = this.#note;
    this.#note = undefined;
    return note;
  }
}
