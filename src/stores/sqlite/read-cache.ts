import { TASK_COLUMNS } from './rows.js';
import type { WalIndexWitness } from './wal-index.js';

/** Default bound of the read cache, in rows. */
export const READ_CACHE_ROWS = 1000;
/** Bound on the text the cached rows hold (UTF-16 code units, summed over their columns). */
const READ_CACHE_CHARS = 4 * 1024 * 1024;
/** A row larger than this is never cached: one big result must not empty the cache. */
const MAX_ROW_CHARS = READ_CACHE_CHARS / 16;

/** Where a cached row (TASK_COLUMNS order) holds expires_at. */
const EXPIRES_AT = TASK_COLUMNS.split(', ').indexOf('expires_at');

function rowChars(values: readonly unknown[]): number {
  let chars = 0;
  for (const value of values) if (typeof value === 'string') chars += value.length;
  return chars;
}

/**
 * Recently read rows of `tasks` (raw values, TASK_COLUMNS order), least recently used first
 * out. An entry is valid only while no other connection has committed: `PRAGMA data_version`
 * (`dataVersion`) changes exactly then, and any change empties the cache. It does not change
 * for this connection's own commits, so the store drops the entry of every task it writes,
 * inside the writing transaction (a read cannot run between that and the commit, both being
 * synchronous on one thread).
 *
 * The version is read before the row is (`validate` first, `put` after the read): a commit by
 * another process landing between the two leaves the next version different, so a row read
 * after it is dropped rather than trusted, never the reverse.
 *
 * With a `witness` (wal-index.ts) the version is read only when the shared wal-index header
 * changed since the last version read (read before it), i.e. after some commit: a run of reads
 * with no commit in between costs one `pread` each instead of a read transaction.
 */
export class ReadCache {
  readonly #rows = new Map<string, { values: unknown[]; chars: number }>();
  readonly #dataVersion: () => unknown;
  readonly #maxRows: number;
  readonly #witness: WalIndexWitness | undefined;
  #version: unknown;
  #chars = 0;
  #soon: Promise<boolean> | undefined;

  constructor(dataVersion: () => unknown, maxRows = READ_CACHE_ROWS, witness?: WalIndexWitness) {
    this.#dataVersion = dataVersion;
    this.#maxRows = Math.max(0, Math.floor(maxRows));
    this.#witness = witness;
  }

  get size(): number {
    return this.#rows.size;
  }

  /**
   * The row of `id` visible at `now` (not expired, by the `expires_at` rule of the SQL read):
   * from the cache, or read by `select` (after the version check) and kept.
   */
  read(
    id: string,
    now: number,
    select: () => unknown[] | undefined,
    validate = true,
  ): unknown[] | undefined {
    if (validate) this.validate();
    const cached = this.get(id);
    if (cached === undefined) {
      const values = select();
      if (values !== undefined) this.put(id, values);
      return values;
    }
    const expiresAt = cached[EXPIRES_AT] as number | null;
    return expiresAt !== null && expiresAt <= now ? undefined : cached;
  }

  has(id: string): boolean {
    return this.#rows.has(id);
  }

  /**
   * Resolves in the next check phase of the event loop, once `validate` ran there: true, or
   * false when it threw (each reader then validates for itself). One validation serves every
   * caller that asked before it: each asked after its request was read from its socket, and
   * the check phase comes after the poll phase that read it, so whatever another process
   * committed before a request was sent is seen. The readers run in the microtasks right
   * after, before any more I/O, so each answer is of a state between its request and reply.
   */
  checkSoon(): Promise<boolean> {
    return (this.#soon ??= new Promise((resolve) => {
      setImmediate(() => {
        this.#soon = undefined;
        try {
          this.validate();
          resolve(true);
        } catch {
          resolve(false);
        }
      });
    }));
  }

  /** Empties the cache if another connection committed since the last call. */
  validate(): void {
    if (this.#maxRows === 0 || this.#witness?.unchanged() === true) return;
    const version = this.#dataVersion();
    if (version !== this.#version) {
      this.clear();
      this.#version = version;
    }
    this.#witness?.remember();
  }

  /** The cached row of `id` (call `validate` first), marked as the most recently used. */
  get(id: string): unknown[] | undefined {
    const entry = this.#rows.get(id);
    if (entry === undefined) return undefined;
    this.#rows.delete(id);
    this.#rows.set(id, entry);
    return entry.values;
  }

  /** Keeps a row just read (never one just written: the commit may still fail). */
  put(id: string, values: unknown[]): void {
    if (this.#maxRows === 0) return;
    const chars = rowChars(values);
    this.drop(id);
    if (chars > MAX_ROW_CHARS) return;
    this.#rows.set(id, { values, chars });
    this.#chars += chars;
    while (this.#rows.size > this.#maxRows || this.#chars > READ_CACHE_CHARS) {
      const oldest = this.#rows.keys().next().value as string;
      this.drop(oldest);
    }
  }

  /** Forgets `id`: every write of this store calls it for each task it touches. */
  drop(id: string): void {
    const entry = this.#rows.get(id);
    if (entry === undefined) return;
    this.#rows.delete(id);
    this.#chars -= entry.chars;
  }

  clear(): void {
    this.#rows.clear();
    this.#chars = 0;
  }

  /** Empties the cache and lets go of the witness's file. */
  close(): void {
    this.clear();
    this.#witness?.close();
  }
}
