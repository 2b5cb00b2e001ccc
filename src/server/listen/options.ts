/** Limits and timings of the `subscriptions/listen` task stream. */
export interface ListenOptions {
  /** Open task streams at most, all callers together; one holds at most half (default 1024). */
  maxSubscriptions: number;
  /** Open task streams one principal may hold at once (default 256). */
  maxSubscriptionsPerPrincipal: number;
  /** Task ids one listen request may name (default 100). */
  maxTaskIdsPerSubscription: number;
  /**
   * SSE comment keep-alive interval (default 15 s). Each tick also re-reads the stream's live
   * tasks from the store, so a change whose event was lost (a Redis pub/sub reconnect, a write
   * by another process on the same SQLite file) still arrives, at most one interval late.
   */
  keepAliveMs: number;
  /** Unsent bytes a slow reader may pile up before its stream is closed (default 1 MiB). */
  maxBufferedBytes: number;
}

export const DEFAULT_LISTEN_OPTIONS: Readonly<ListenOptions> = Object.freeze({
  maxSubscriptions: 1024,
  maxSubscriptionsPerPrincipal: 256,
  maxTaskIdsPerSubscription: 100,
  keepAliveMs: 15_000,
  maxBufferedBytes: 1024 * 1024,
});
