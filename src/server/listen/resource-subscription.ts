import { internalError, type RequestId } from '../../protocol/index.js';
import type { TaskEvents } from '../../store/events.js';
import { isPlausibleTaskId } from '../../task/ids.js';
import type { JsonObject, TaskRecord } from '../../task/record.js';
import { isTerminal } from '../../task/status.js';
import type { TaskStore } from '../../store/port.js';
import { coalesced } from '../tasks/coalesced.js';
import { TextTotal } from '../tasks/text-total.js';
import type { TaskRuntimePort } from '../tasks/runtime-port.js';
import { taskUriParts, type TaskUriParts } from '../tasks/task-uri.js';
import type { ListenOptions } from './options.js';
import type { ListenRequest } from './request.js';
import type { ListenSink } from './sse-sink.js';
import { META, SUBSCRIPTION_ACK_NOTIFICATION } from '../../protocol/constants.js';

const RESOURCE_UPDATED_NOTIFICATION = 'notifications/resources/updated';

export interface ResourceSubscriptionDeps {
  runtime: Pick<TaskRuntimePort, 'getTask'>;
  events: TaskEvents;
  /** Reads a text's length when no event said it yet (updates then carry it). */
  store?: Pick<TaskStore, 'readText'> | undefined;
  principal: string;
  request: ListenRequest;
  sink: ListenSink;
  options: ListenOptions;
  serverInfo: JsonObject;
}

/** One granted URI: its task, and the coalesced notifier of its updates. */
interface Followed {
  uri: string;
  parts: TaskUriParts;
  notifier: { poke(): void; stop(): void };
  total: TextTotal;
  /** Told since its task ended (or ended before the grant: nothing to tell). */
  told: boolean;
}

/**
 * One open `subscriptions/listen` stream for task resource URIs (2026-07-28): the
 * acknowledgement lists the URIs granted (the caller's own tasks' resources; any other URI is
 * left out, as an unknown resource), then `notifications/resources/updated` as a task's text
 * grows, from this process or another (the store's `task:text` events), coalesced to a few a
 * second, and once more when the task ends, each saying the text's length (text-total.ts). When every granted task has ended (or none was
 * granted) the stream ends with the listen result.
 */
export class ResourceSubscription {
  readonly id: RequestId;
  readonly #deps: ResourceSubscriptionDeps;
  readonly #followed = new Map<string, Followed[]>();
  /** Tasks seen ended (their last notification may still be pending). */
  readonly #ended = new Set<string>();
  readonly #stops: (() => void)[] = [];
  #acknowledged = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(deps: ResourceSubscriptionDeps) {
    this.#deps = deps;
    this.id = deps.request.id;
    deps.sink.onClose(() => this.#stop());
  }

  async start(): Promise<void> {
    const { runtime, principal, request } = this.#deps;
    const uris = request.resourceUris ?? [];
    // Listen first: nothing that happens while the tasks are read is lost.
    this.#listen();
    let tasks: (TaskRecord | undefined)[];
    try {
      tasks = await Promise.all(
        uris.map((uri) => {
          const parts = taskUriParts(uri);
          return parts !== undefined && isPlausibleTaskId(parts.taskId)
            ? runtime.getTask(parts.taskId, principal)
            : Promise.resolve(undefined);
        }),
      );
    } catch {
      this.#deps.sink.send({ jsonrpc: '2.0', id: this.id, error: internalError().error });
      this.#deps.sink.end();
      return;
    }
    uris.forEach((uri, i) => {
      const task = tasks[i];
      if (task !== undefined) this.#follow(uri, task);
    });
    this.#acknowledge();
  }

  #follow(uri: string, task: TaskRecord): void {
    const parts = taskUriParts(uri) as TaskUriParts;
    const store = this.#deps.store;
    const total = new TextTotal(
      store === undefined
        ? undefined
        : async () => (await store.readText(parts.taskId, parts.kind, 0, 0))?.end,
    );
    const told = isTerminal(task.status);
    const followed: Followed = { uri, parts, total, told, notifier: { poke() {}, stop() {} } };
    followed.notifier = coalesced(() => void this.#updated(followed));
    const list = this.#followed.get(task.id) ?? [];
    list.push(followed);
    this.#followed.set(task.id, list);
    if (told) this.#ended.add(task.id);
  }

  #acknowledge(): void {
    if (this.#deps.sink.closed) return;
    const granted = [...this.#followed.values()].flatMap((list) => list.map((f) => f.uri));
    this.#deps.sink.send({
      jsonrpc: '2.0',
      method: SUBSCRIPTION_ACK_NOTIFICATION,
      params: {
        _meta: { [META.subscriptionId]: this.id },
        notifications: { resourceSubscriptions: granted },
      },
    });
    this.#acknowledged = true;
    if (!this.#finishWhenDone()) this.#startTimer();
  }

  #listen(): void {
    const { events } = this.#deps;
    const named = new Set(
      (this.#deps.request.resourceUris ?? []).map((uri) => taskUriParts(uri)?.taskId),
    );
    const only = { only: (id: string) => named.has(id) };
    this.#stops.push(
      events.on('task:text', ({ id, kind, end }) => this.#poke(id, kind, end), only),
      events.on('task:transition', ({ task, to }) => isTerminal(to) && this.#end(task.id), only),
      events.on('task:deleted', ({ id }) => this.#end(id), only),
      events.on('store:resync', () => {
        for (const list of this.#followed.values()) for (const f of list) f.total.forget();
        for (const id of this.#followed.keys()) this.#poke(id);
        void this.#reread();
      }),
    );
  }

  /** Text of a followed task grew (to `end`): its URIs of that kind will be told. */
  #poke(taskId: string, kind?: string, end?: number): void {
    for (const f of this.#followed.get(taskId) ?? []) {
      if (kind !== undefined && f.parts.kind !== kind) continue;
      if (end !== undefined) f.total.grew(end);
      if (this.#acknowledged) f.notifier.poke();
    }
  }

  #end(taskId: string): void {
    this.#ended.add(taskId);
    for (const f of this.#followed.get(taskId) ?? []) {
      f.total.end();
      f.told = false;
    }
    this.#poke(taskId);
  }

  async #updated(followed: Followed): Promise<void> {
    const ended = this.#ended.has(followed.parts.taskId);
    const meta = await followed.total.meta();
    if (this.#deps.sink.closed) return;
    const params = { _meta: { ...meta, [META.subscriptionId]: this.id }, uri: followed.uri };
    this.#deps.sink.send({ jsonrpc: '2.0', method: RESOURCE_UPDATED_NOTIFICATION, params });
    if (!ended) return;
    followed.told = true;
    this.#finishWhenDone();
  }

  /** Ends the stream gracefully once every granted task ended and each of its URIs was told. */
  #finishWhenDone(): boolean {
    if (this.#deps.sink.closed) return false;
    for (const [id, list] of this.#followed) {
      if (!this.#ended.has(id) || list.some((f) => !f.told)) return false;
    }
    const result = {
      resultType: 'complete',
      _meta: { [META.subscriptionId]: this.id, [META.serverInfo]: this.#deps.serverInfo },
    };
    this.#deps.sink.send({ jsonrpc: '2.0', id: this.id, result });
    this.#deps.sink.end();
    return true;
  }

  #startTimer(): void {
    this.#timer = setInterval(() => void this.#tick(), this.#deps.options.keepAliveMs);
    this.#timer.unref();
  }

  async #tick(): Promise<void> {
    if (!this.#deps.sink.keepAlive()) return;
    await this.#reread();
  }

  /** Reads the followed tasks again: an end whose event was missed still ends the stream. */
  async #reread(): Promise<void> {
    if (!this.#acknowledged) return;
    for (const id of [...this.#followed.keys()]) {
      if (this.#ended.has(id)) continue;
      try {
        const task = await this.#deps.runtime.getTask(id, this.#deps.principal);
        if (task === undefined || isTerminal(task.status)) this.#end(id);
      } catch {
        // The store is unreachable: the next tick tries again.
      }
    }
  }

  #stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    for (const stop of this.#stops.splice(0)) stop();
    for (const list of this.#followed.values()) for (const f of list) f.notifier.stop();
  }
}
