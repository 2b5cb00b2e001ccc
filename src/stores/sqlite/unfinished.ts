import type Database from 'better-sqlite3';

/** The statuses the per-principal cap counts. */
export function isUnfinished(status: string): boolean {
  return status === 'working' || status === 'input_required';
}

/**
 * The per-principal count of unfinished tasks (`unfinished_counts`), kept by the store's own
 * writes since schema 6 (schema 5 kept it by triggers, a row write per task created or
 * finished: ~5 µs of a create's 13–15 µs in the store). A write transaction gathers its changes
 * here and writes them once per principal just before it commits (`flush`), so a batch of one
 * caller's creates and finishes costs one row write, or none when they cancel out. Every
 * process on the file does the same inside its IMMEDIATE transaction, so a count read in a
 * creating write (stored + this transaction's pending) is exact across processes.
 *
 * A change is noted only after the statement that made it ran; a savepoint's changes are
 * flushed inside it or discarded with it (group-commit.ts).
 */
export class UnfinishedCounts {
  readonly #select: Database.Statement;
  readonly #add: Database.Statement;
  readonly #pending = new Map<string, number>();
  /**
   * The stored counts this transaction read, until it writes them: no other process can change
   * them while it holds the write lock, so a batch of one caller's creates reads the row once.
   */
  readonly #stored = new Map<string, number>();

  constructor(db: Database.Database) {
    this.#select = db.prepare('SELECT n FROM unfinished_counts WHERE principal = ?').pluck();
    this.#add = db.prepare(
      'INSERT INTO unfinished_counts (principal, n) VALUES (?, ?) ' +
        'ON CONFLICT (principal) DO UPDATE SET n = n + excluded.n',
    );
  }

  /** Notes a task of `principal` written with status `to`, `from` before (undefined: none). */
  changed(principal: string, from: string | undefined, to: string | undefined): void {
    const was = from !== undefined && isUnfinished(from);
    const is = to !== undefined && isUnfinished(to);
    if (was === is) return;
    this.#pending.set(principal, (this.#pending.get(principal) ?? 0) + (is ? 1 : -1));
  }

  /** Inside a write transaction: the principal's unfinished tasks, this transaction's included. */
  count(principal: string): number {
    let stored = this.#stored.get(principal);
    if (stored === undefined) {
      stored = (this.#select.get(principal) as number | undefined) ?? 0;
      this.#stored.set(principal, stored);
    }
    return Math.max(0, stored + (this.#pending.get(principal) ?? 0));
  }

  /** Writes the pending changes (inside the transaction that made them). */
  flush(): void {
    this.#stored.clear();
    if (this.#pending.size === 0) return;
    for (const [principal, delta] of this.#pending) {
      if (delta !== 0) this.#add.run(principal, delta);
    }
    this.#pending.clear();
  }

  /** Forgets the pending changes: the transaction (or savepoint) that made them rolled back. */
  discard(): void {
    this.#stored.clear();
    this.#pending.clear();
  }
}
