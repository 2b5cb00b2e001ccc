import { EventEmitter } from 'node:events';
import type { TaskRecord } from '../task/record.js';
import type { TaskStatus } from '../task/status.js';
import type { TaskTextKind } from './text-kind.js';

/** What a store tells its listeners. Consumed by the runtime, the server, metrics and the CLI. */
export interface TaskEventMap {
  /** A task was written for the first time. */
  'task:created': { task: TaskRecord };
  /** Any write after creation (progress, input, answers, transitions). */
  'task:updated': { task: TaskRecord; previousStatus: TaskStatus };
  /** A write that changed the status. Also emitted as `task:updated`. */
  'task:transition': { task: TaskRecord; from: TaskStatus; to: TaskStatus };
  /** A task's text grew (`appendText`), from this process or another; `end`: its new length. */
  'task:text': { id: string; kind: TaskTextKind; end: number };
  /** The task is gone (expired and swept). */
  'task:deleted': { id: string };
  /**
   * Other processes' writes may have been missed: the store's connection for change events
   * was lost and is back. Whoever follows tasks should read them again.
   */
  'store:resync': Record<string, never>;
}

export type TaskEventName = keyof TaskEventMap;
export type TaskEventListener<K extends TaskEventName> = (event: TaskEventMap[K]) => void;

/** Options of `TaskEvents.on`. */
export interface ListenOptions {
  /**
   * Only events of the tasks this accepts (by id) reach the listener. A store then reads back
   * another process's write only when some listener wants that task: a worker that follows
   * the tasks it runs does not pay a read for every write of the fleet.
   */
  only?: (taskId: string) => boolean;
}

/** A small typed emitter. Listener errors are reported, never thrown into the writer. */
export class TaskEvents {
  readonly #emitter = new EventEmitter();
  readonly #filters = new Map<unknown, (taskId: string) => boolean>();
  /** `task:updated` listeners of one task each: a write reaches only its own task's waiters. */
  readonly #byTask = new Map<string, Set<TaskEventListener<'task:updated'>>>();

  constructor() {
    this.#emitter.setMaxListeners(0);
  }

  on<K extends TaskEventName>(
    name: K,
    listener: TaskEventListener<K>,
    options: ListenOptions = {},
  ): () => void {
    const { only } = options;
    const registered: TaskEventListener<K> =
      only === undefined ? listener : (event) => void (only(idOf(event)) && listener(event));
    if (only !== undefined) this.#filters.set(registered, only);
    this.#emitter.on(name, registered);
    return () => {
      this.#emitter.off(name, registered);
      this.#filters.delete(registered);
    };
  }

  /**
   * Listens to `task:updated` of task `taskId` only. For many short waits at once (one per
   * inline call): other tasks' writes never call it, where `on` with `only` is called by all.
   */
  onTaskUpdated(taskId: string, listener: TaskEventListener<'task:updated'>): () => void {
    let listeners = this.#byTask.get(taskId);
    if (listeners === undefined) {
      listeners = new Set();
      this.#byTask.set(taskId, listeners);
    }
    const own = listeners;
    own.add(listener);
    return () => {
      own.delete(listener);
      if (own.size === 0 && this.#byTask.get(taskId) === own) this.#byTask.delete(taskId);
    };
  }

  /** Whether some listener of `name` wants events of task `taskId` (see `ListenOptions.only`). */
  wants(name: TaskEventName, taskId: string): boolean {
    if (name === 'task:updated' && this.#byTask.has(taskId)) return true;
    for (const listener of this.#emitter.listeners(name)) {
      const only = this.#filters.get(listener);
      if (only === undefined || only(taskId)) return true;
    }
    return false;
  }

  emit<K extends TaskEventName>(name: K, event: TaskEventMap[K]): void {
    for (const listener of this.#emitter.listeners(name)) call(name, listener, event);
    if (name !== 'task:updated') return;
    const own = this.#byTask.get((event as TaskEventMap['task:updated']).task.id);
    if (own === undefined) return;
    for (const listener of own.size === 1 ? own : [...own]) call(name, listener, event);
  }

  /** Emit the events that one successful write implies. */
  emitWrite(task: TaskRecord, previousStatus: TaskStatus): void {
    this.emit('task:updated', { task, previousStatus });
    if (previousStatus !== task.status) {
      this.emit('task:transition', { task, from: previousStatus, to: task.status });
    }
  }

  /** Listeners of `name`, those of one task's (`onTaskUpdated`) included. */
  listenerCount(name: TaskEventName): number {
    let count = this.#emitter.listenerCount(name);
    if (name === 'task:updated') for (const own of this.#byTask.values()) count += own.size;
    return count;
  }
}

function call<K extends TaskEventName>(name: K, listener: unknown, event: TaskEventMap[K]): void {
  try {
    (listener as TaskEventListener<K>)(event);
  } catch (error) {
    process.emitWarning(`taskrail: a '${name}' listener threw: ${String(error)}`);
  }
}

function idOf(event: TaskEventMap[TaskEventName]): string {
  if ('task' in event) return event.task.id;
  return 'id' in event ? event.id : '';
}
