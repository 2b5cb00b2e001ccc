import type { Clock } from '../../task/time.js';

export interface SqliteTaskStoreOptions {
  /** Time source for expiry and leases; tests pass a fake one. */
  clock?: Clock;
  /**
   * How long an operation waits for another process's lock, in total. Default 5000 ms. The
   * wait does not block the event loop beyond a few ms at a time.
   */
  busyTimeoutMs?: number;
  /**
   * `normal` (default): a commit survives a crash of the process; a power cut may lose the
   * last commits. `full`: every write is on disk (fsynced) before its promise resolves, so it
   * survives power loss; concurrent writes share one commit and one fsync (group commit).
   */
  synchronous?: 'normal' | 'full';
  /** Where warnings go (a checkpoint worker that stopped). Default: `process.emitWarning`. */
  onWarning?: (message: string) => void;
  /**
   * How many recently read tasks `get` may answer from memory (default 1000; 0: none). A
   * cached row is used only while no other connection has committed to the file.
   */
  readCacheRows?: number;
}
