import type Database from 'better-sqlite3';
import { TaskrailError } from '../../task/errors.js';

type Write = () => unknown;
type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };
interface Pending {
  write: Write;
  savepoint: boolean;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** How the store runs one synchronous operation (its lock waits and error mapping). */
export type Runner = <T>(operation: () => T) => Promise<T>;

/**
 * What a transaction gathered in memory and writes only before it commits (unfinished.ts):
 * `flush` writes it inside the transaction, `discard` forgets it after a rollback.
 */
export interface Deferred {
  flush(): void;
  discard(): void;
}

/**
 * Group commit: the writes asked for while the event loop was busy (with `synchronous=full`,
 * in practice while the previous commit's fsync held it) run in one IMMEDIATE transaction
 * and share its one commit (and so, in full mode, one fsync); a transaction's fixed cost is
 * paid once per batch, not once per write. A write that may refuse (throw a TaskrailError)
 * after it changed something runs in its own savepoint, so its refusal undoes only its own
 * changes; the others (most: they refuse, if ever, before their first change) run without one,
 * since a savepoint copies every page it touches to a statement journal first.
 * Every write's promise settles only after the commit returned: a reply built on it describes
 * data on disk. A write's own refusal (a TaskrailError such as a conflict) fails that write
 * alone; anything else (I/O error, full disk, a failed commit) rolls the whole batch back and
 * fails every write of it with the store's classified, retryable error.
 */
export class GroupCommit {
  readonly #batchTx: (writes: Pending[]) => Outcome[];
  readonly #run: Runner;
  #queue: Pending[] = [];
  #flushing: Promise<void> | undefined;

  readonly #committed: () => void;

  /** `committed`: told after each batch's commit (the checkpointer counts them). */
  constructor(db: Database.Database, run: Runner, deferred: Deferred, committed: () => void) {
    this.#run = run;
    this.#committed = committed;
    // A savepoint writes its own deferred changes before it is released, so a refusal that
    // rolls it back takes them along; those of the writes before it are written first.
    const savepoint = db.transaction((write: Write) => {
      const value = write();
      deferred.flush();
      return value;
    });
    const undoable = (write: Write): unknown => {
      deferred.flush();
      try {
        return savepoint(write);
      } catch (error) {
        deferred.discard();
        throw error;
      }
    };
    this.#batchTx = db.transaction((writes: Pending[]) => {
      deferred.discard(); // a batch retried after a lock wait starts over
      const outcomes = writes.map(({ write, savepoint: inSavepoint }): Outcome => {
        try {
          return { ok: true, value: inSavepoint ? undoable(write) : write() };
        } catch (error) {
          if (error instanceof TaskrailError) return { ok: false, error };
          throw error;
        }
      });
      deferred.flush();
      return outcomes;
    }).immediate;
  }

  /**
   * Queues `write` for the next batch; resolves with its result once the batch committed.
   * `savepoint`: the write may throw a TaskrailError after its first change (see above).
   */
  write<T>(write: () => T, { savepoint = false }: { savepoint?: boolean } = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ write, savepoint, resolve: resolve as (value: unknown) => void, reject });
      this.#flushing ??= new Promise<void>((next) => setImmediate(next)).then(() => this.#drain());
    });
  }

  /** True while writes are queued or being committed. */
  get pending(): boolean {
    return this.#flushing !== undefined;
  }

  /** Resolves once every queued write has settled. */
  async settled(): Promise<void> {
    await this.#flushing;
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue;
      this.#queue = [];
      await this.#commit(batch);
    }
    this.#flushing = undefined;
  }

  async #commit(batch: Pending[]): Promise<void> {
    let outcomes: Outcome[];
    try {
      outcomes = await this.#run(() => this.#batchTx(batch));
    } catch (error) {
      for (const pending of batch) pending.reject(error);
      return;
    }
    this.#committed();
    outcomes.forEach((outcome, i) => {
      const pending = batch[i] as Pending;
      if (outcome.ok) pending.resolve(outcome.value);
      else pending.reject(outcome.error);
    });
  }
}
