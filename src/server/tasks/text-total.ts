import type { JsonObject } from '../../task/record.js';

/**
 * The `_meta` of a task resource's `notifications/resources/updated` (both wires): the text's
 * length when it was sent (UTF-16 code units, the dropped front included, as a read's
 * `taskrail/total`), and `taskrail/ended` once the task ended (no update follows), so that a
 * follower reads only when there is something past what it has read.
 */
export const TEXT_TOTAL_META = 'taskrail/total';
export const TEXT_ENDED_META = 'taskrail/ended';

/** Reads a text's length now (undefined when the task is gone). */
export type ReadTextEnd = () => Promise<number | undefined>;

/**
 * The length of one followed task text: taken from its `task:text` events, read from the store
 * when none was seen yet (or events may have been missed).
 */
export class TextTotal {
  readonly #read: ReadTextEnd | undefined;
  #known: number | undefined;
  #ended = false;

  constructor(read: ReadTextEnd | undefined) {
    this.#read = read;
  }

  /** A write made the text `end` long. */
  grew(end: number): void {
    this.#known = Math.max(this.#known ?? 0, end);
  }

  /** The task ended or was removed: the next update is its last. */
  end(): void {
    this.#ended = true;
  }

  /** Events may have been missed (the store resynced): the next update reads the length. */
  forget(): void {
    this.#known = undefined;
  }

  /** The update's `_meta`; without a length when it could not be read. */
  async meta(): Promise<JsonObject> {
    if (this.#known === undefined && this.#read !== undefined) {
      const read = await this.#read().catch(() => undefined);
      if (read !== undefined) this.grew(read);
    }
    return {
      ...(this.#known === undefined ? {} : { [TEXT_TOTAL_META]: this.#known }),
      ...(this.#ended ? { [TEXT_ENDED_META]: true } : {}),
    };
  }
}
