import type { TaskStore, TaskTextKind } from '../../store/port.js';
import { isTaskStatus } from '../../task/status.js';

/**
 * A change notice, as the Postgres store NOTIFYs and the Redis store PUBLISHes it: who wrote,
 * what kind of change, which task, and what changed; never arguments or results.
 */
export interface ChangeNotice {
  o: string;
  k: 'c' | 'w' | 'd' | 'x';
  id: string;
  /** For 'w': the status before the write. */
  p?: string;
  /** For 'w': the revision written. */
  r?: number;
  /** The status written, its message and the write's time (Redis notices). */
  s?: string;
  m?: string;
  u?: number;
  /** For 'x' (a text grew): which text, and its new length. */
  t?: string;
  e?: number;
}

/**
 * Turns other processes' change notices into this store's events. Notices carry ids and what
 * changed, so the record is read back, and only when a listener wants that task. Notices are handled one
 * at a time, in the order the database committed them.
 */
export class EventRelay {
  readonly #store: TaskStore;
  readonly #ownPrefix: string;
  readonly #warn: (message: string) => void;
  #chain: Promise<void> = Promise.resolve();

  /** `ownPrefix`: how this store's own notices begin (they were emitted when made). */
  constructor(store: TaskStore, ownPrefix: string, warn: (message: string) => void) {
    this.#store = store;
    this.#ownPrefix = ownPrefix;
    this.#warn = warn;
  }

  receive(payload: string): void {
    // Our own writes come back too; they were emitted when made.
    if (payload.startsWith(this.#ownPrefix)) return;
    let notice: ChangeNotice;
    try {
      notice = JSON.parse(payload) as ChangeNotice;
    } catch {
      this.#warn(`ignoring a malformed notification: ${payload.slice(0, 80)}`);
      return;
    }
    this.#chain = this.#chain.then(() => this.#deliver(notice)).catch(() => undefined);
  }

  async #deliver(notice: ChangeNotice): Promise<void> {
    const events = this.#store.events;
    if (notice.k === 'd') {
      events.emit('task:deleted', { id: notice.id });
      return;
    }
    if (notice.k === 'x') {
      if (isTextKind(notice.t) && typeof notice.e === 'number') {
        events.emit('task:text', { id: notice.id, kind: notice.t, end: notice.e });
      }
      return;
    }
    if (notice.k === 'c') {
      if (!events.wants('task:created', notice.id)) return;
      const task = await this.#store.get(notice.id);
      if (task !== undefined) events.emit('task:created', { task });
      return;
    }
    const wanted =
      events.wants('task:updated', notice.id) || events.wants('task:transition', notice.id);
    if (!wanted || !isTaskStatus(notice.p)) return;
    const task = await this.#store.get(notice.id);
    if (task === undefined) return;
    // The read-back may already show a later write; that write's own notice reports it (with
    // its own previous status). Emitting it here too would report one transition twice.
    if (notice.r !== undefined && task.revision !== notice.r) return;
    events.emitWrite(task, notice.p);
  }
}

function isTextKind(kind: unknown): kind is TaskTextKind {
  return kind === 'output' || kind === 'result' || kind === 'structured';
}
