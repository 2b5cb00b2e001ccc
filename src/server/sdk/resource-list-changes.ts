import type { McpServer } from '@modelcontextprotocol/server';
import type { TaskStore } from '../../store/port.js';
import { isKeptApart } from '../../task/kept-apart.js';
import type { TaskRecord } from '../../task/record.js';
import { isTerminal } from '../../task/status.js';
import { coalesced } from '../tasks/coalesced.js';
import { ANONYMOUS } from '../tasks/principal.js';
import { CALL_SESSION_META, SESSION_META } from '../tasks/task-uri.js';

type Appeared = (task: TaskRecord) => void;

/** First outputs remembered, so that each task's output is announced once. */
const OUTPUTS_REMEMBERED = 10_000;

/**
 * Tells its listeners of each task resource as it appears in `resources/list` (a shortened
 * result or moved structuredContent once the task ends, its output at the first write), with
 * the task, from any process writing to the store. Subscribed to the store's events only while
 * somebody listens.
 */
class ResourceAppearances {
  readonly #store: TaskStore;
  readonly #listeners = new Set<Appeared>();
  readonly #outputs = new Set<string>();
  #detach: (() => void) | undefined;

  constructor(store: TaskStore) {
    this.#store = store;
  }

  on(listener: Appeared): () => void {
    this.#listeners.add(listener);
    this.#detach ??= this.#attach();
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size > 0) return;
      this.#detach?.();
      this.#detach = undefined;
    };
  }

  #attach(): () => void {
    const events = this.#store.events;
    const stops = [
      events.on('task:updated', ({ task, previousStatus }) => {
        const ended = isTerminal(task.status) && !isTerminal(previousStatus);
        if (ended && task.result !== undefined && isKeptApart(task.result)) this.#tell(task);
      }),
      events.on('task:text', ({ id, kind }) => {
        if (kind !== 'output' || this.#outputs.has(id)) return;
        this.#remember(id);
        void this.#store
          .get(id)
          .then((task) => task !== undefined && this.#tell(task))
          .catch(() => undefined);
      }),
    ];
    return () => stops.forEach((stop) => stop());
  }

  #remember(id: string): void {
    this.#outputs.add(id);
    if (this.#outputs.size <= OUTPUTS_REMEMBERED) return;
    const oldest = this.#outputs.values().next().value;
    if (oldest !== undefined) this.#outputs.delete(oldest);
  }

  #tell(task: TaskRecord): void {
    for (const listener of this.#listeners) listener(task);
  }
}

const byStore = new WeakMap<TaskStore, ResourceAppearances>();

function appearancesOf(store: TaskStore): ResourceAppearances {
  let appearances = byStore.get(store);
  if (appearances === undefined) byStore.set(store, (appearances = new ResourceAppearances(store)));
  return appearances;
}

/**
 * Whether a viewer sees `task` in its `resources/list`: its principal's, and for an anonymous
 * caller on a 2025-11-25 session one that session created (the rule of task-resources.ts).
 */
function visibleTo(task: TaskRecord, principal: string, session: string | undefined): boolean {
  if (task.principal !== principal) return false;
  if (principal !== ANONYMOUS || session === undefined) return true;
  return task.meta[SESSION_META] === session || task.meta[CALL_SESSION_META] === session;
}

/**
 * Calls `notify` (at most a few times a second) whenever a task resource appears that a viewer
 * of `principal` (on `session`, for an anonymous one) would find in `resources/list`. Hosts such
 * as Gemini CLI re-list resources only on `notifications/resources/list_changed`, and offer
 * their model a resource tool only once the list is non-empty. Returns the stop function.
 */
export function onResourceListChanges(
  store: TaskStore,
  viewer: { principal: string; session?: string | undefined },
  notify: () => void,
): () => void {
  const coalescedNotify = coalesced(notify);
  const stop = appearancesOf(store).on((task) => {
    if (visibleTo(task, viewer.principal, viewer.session)) coalescedNotify.poke();
  });
  return () => {
    stop();
    coalescedNotify.stop();
  };
}

/** `notifications/resources/list_changed` on a session's own stream, for its caller's resources. */
export function forwardResourceListChanges(
  mcp: McpServer,
  store: TaskStore | undefined,
  viewer: { principal: string; session?: string | undefined },
): () => void {
  if (store === undefined) return () => undefined;
  return onResourceListChanges(store, viewer, () => {
    // A session without an open stream drops it; the next list is read on request anyway.
    mcp.server.sendResourceListChanged().catch(() => undefined);
  });
}
