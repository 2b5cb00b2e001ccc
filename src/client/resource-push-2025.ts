import { PushNotes, type OutputPush, type PushNote } from './push-notes.js';
import type { Session2025 } from './session-2025.js';
import { readSseMessages } from './sse.js';

const RESOURCE_UPDATED_NOTIFICATION = 'notifications/resources/updated';
/** How long the session's standalone stream may take to open. */
const OPEN_MS = 10_000;

type JsonObject = Record<string, unknown>;

/** One subscribed URI of a session and whoever follows it there. */
interface Subscribed {
  followers: Set<PushNotes>;
  confirmed: Promise<boolean>;
}

/**
 * The resource subscriptions of one 2025-11-25 session: `resources/subscribe` per URI (once,
 * however many follow it; `resources/unsubscribe` when the last one stops), and the session's
 * standalone stream (GET), where the server sends `notifications/resources/updated`, open
 * while anything is followed. Used only when the server declares `resources.subscribe`. A
 * stream that cannot be opened or breaks leaves every follower to poll.
 */
export class SessionResourcePush {
  readonly #session: Session2025;
  readonly #subscribed = new Map<string, Subscribed>();
  #stream: { open: Promise<boolean>; stop: AbortController } | undefined;

  constructor(session: Session2025) {
    this.#session = session;
  }

  /** True when the server says it pushes updates of subscribed resources. */
  static offered(session: Session2025): boolean {
    const resources = session.serverCapabilities['resources'] as JsonObject | undefined;
    return resources?.['subscribe'] === true;
  }

  /** A push of `uri`'s updates for one follower. */
  follow(uri: string): OutputPush {
    const notes = new PushNotes();
    const subscribed = this.#subscribe(uri);
    subscribed.followers.add(notes);
    void subscribed.confirmed.then((ok) => notes.settle(ok));
    return {
      ready: (signal) => notes.ready(signal),
      next: (ms: number, signal?: AbortSignal): Promise<PushNote | undefined> =>
        notes.next(ms, signal),
      close: () => {
        notes.settle(false);
        notes.wakeAll();
        this.#leave(uri, notes);
      },
    };
  }

  #subscribe(uri: string): Subscribed {
    const known = this.#subscribed.get(uri);
    if (known !== undefined) return known;
    const subscribed: Subscribed = { followers: new Set(), confirmed: Promise.resolve(false) };
    subscribed.confirmed = (async () => {
      // The stream first: an update sent before it is open would be dropped by the server.
      if (!(await this.#openStream())) return false;
      const reply = await this.#session
        .request('resources/subscribe', { uri })
        .catch(() => undefined);
      return reply?.kind === 'result';
    })();
    this.#subscribed.set(uri, subscribed);
    return subscribed;
  }

  #leave(uri: string, notes: PushNotes): void {
    const subscribed = this.#subscribed.get(uri);
    if (subscribed === undefined || !subscribed.followers.delete(notes)) return;
    if (subscribed.followers.size > 0) return;
    this.#subscribed.delete(uri);
    void subscribed.confirmed.then((ok) => {
      if (ok) void this.#session.request('resources/unsubscribe', { uri }).catch(() => undefined);
    });
    if (this.#subscribed.size === 0) this.#closeStream();
  }

  #openStream(): Promise<boolean> {
    if (this.#stream !== undefined) return this.#stream.open;
    const stop = new AbortController();
    // A server that does not answer the GET in time is polled instead.
    const late = setTimeout(() => stop.abort(), OPEN_MS);
    const open = this.#session.openStream(stop.signal).then(
      (response) => {
        const type = response.headers.get('content-type') ?? '';
        if (!response.ok || !type.includes('text/event-stream') || response.body === null) {
          void response.body?.cancel();
          return false;
        }
        void this.#read(response.body, stop.signal);
        return true;
      },
      () => false,
    );
    void open.finally(() => clearTimeout(late));
    this.#stream = { open, stop };
    return open;
  }

  async #read(body: ReadableStream<Uint8Array>, signal: AbortSignal): Promise<void> {
    await readSseMessages(body, (message) => {
      const m = (message ?? {}) as JsonObject;
      if (m['method'] !== RESOURCE_UPDATED_NOTIFICATION) return false;
      const params = (m['params'] ?? {}) as JsonObject;
      const meta = params['_meta'] as JsonObject | undefined;
      const followers = this.#subscribed.get(String(params['uri']))?.followers ?? [];
      for (const notes of followers) notes.updated(meta);
      return false;
    }).catch(() => undefined);
    if (signal.aborted) return;
    // The stream broke: whoever follows polls from here; a later follower opens a new one.
    this.#stream = undefined;
    for (const subscribed of this.#subscribed.values()) {
      for (const notes of subscribed.followers) notes.add({ lost: true });
    }
    this.#subscribed.clear();
  }

  #closeStream(): void {
    this.#stream?.stop.abort();
    this.#stream = undefined;
  }
}
