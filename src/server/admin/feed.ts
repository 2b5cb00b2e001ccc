import type { TaskStore } from '../../store/port.js';
import type { TaskRecord } from '../../task/record.js';
import { isTerminal } from '../../task/status.js';
import type { TaskJournal } from './journal.js';
import type { AdminMetrics } from './metrics.js';
import { summaryOf, type TaskSummary } from './views.js';
import { timerDelay } from '../../task/timers.js';

/** What a dashboard hears: a changed task's new row, or a task that is gone. */
export type FeedMessage = { type: 'task'; task: TaskSummary } | { type: 'deleted'; id: string };
export type FeedListener = (message: FeedMessage) => void;

export interface FeedOptions {
  store: TaskStore;
  journal: TaskJournal;
  metrics: AdminMetrics;
  /** Re-list interval while at least one dashboard listens. */
  pollMs: number;
  /** How many of the newest tasks a re-list reads. */
  pollLimit: number;
}

/**
 * Turns store events into dashboard messages, metrics and timelines. Store events cover this
 * process's writes (and, on Redis, every replica's); a re-list, running only while a dashboard
 * is connected, catches what other processes wrote to a shared SQLite file.
 */
export class AdminFeed {
  readonly #options: FeedOptions;
  readonly #listeners = new Set<FeedListener>();
  readonly #unsubscribe: (() => void)[];
  #timer: NodeJS.Timeout | undefined;
  #polling = false;

  constructor(options: FeedOptions) {
    this.#options = options;
    const { events } = options.store;
    this.#unsubscribe = [
      events.on('task:created', ({ task }) => {
        options.metrics.taskCreated(task);
        this.#saw(task, 'event');
      }),
      events.on('task:updated', ({ task, previousStatus }) => {
        if (isTerminal(task.status) && !isTerminal(previousStatus)) {
          options.metrics.taskFinished(task);
        }
        this.#saw(task, 'event');
      }),
      events.on('task:deleted', ({ id }) => {
        options.journal.forget(id);
        this.#broadcast({ type: 'deleted', id });
      }),
    ];
  }

  subscribe(listener: FeedListener): () => void {
    this.#listeners.add(listener);
    this.#startPolling();
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) this.#stopPolling();
    };
  }

  get listenerCount(): number {
    return this.#listeners.size;
  }

  /** True while the re-list timer runs (only with a dashboard connected). */
  get polling(): boolean {
    return this.#timer !== undefined;
  }

  /** One re-list now; exposed so tests need not wait for the timer. */
  async pollNow(): Promise<void> {
    if (this.#polling) return;
    this.#polling = true;
    try {
      const page = await this.#options.store.list({ limit: this.#options.pollLimit });
      for (const task of page.tasks) this.#saw(task, 'poll');
    } catch {
      // Counted as a store error by the instrumented store; the next tick tries again.
    } finally {
      this.#polling = false;
    }
  }

  close(): void {
    for (const unsubscribe of this.#unsubscribe.splice(0)) unsubscribe();
    this.#listeners.clear();
    this.#stopPolling();
  }

  #saw(task: TaskRecord, source: 'event' | 'poll'): void {
    if (this.#options.journal.observe(task, source)) {
      this.#broadcast({ type: 'task', task: summaryOf(task) });
    }
  }

  #broadcast(message: FeedMessage): void {
    for (const listener of this.#listeners) listener(message);
  }

  #startPolling(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => void this.pollNow(), timerDelay(this.#options.pollMs));
    this.#timer.unref();
  }

  #stopPolling(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
