import type { TaskEvents } from '../../store/events.js';
import type { TaskStore } from '../../store/port.js';
import type { JsonObject } from '../../task/record.js';
import type { TaskRuntimePort } from '../tasks/runtime-port.js';
import { DEFAULT_LISTEN_OPTIONS, type ListenOptions } from './options.js';
import type { ListenRequest } from './request.js';
import type { ListenSink } from './sse-sink.js';
import { ResourceSubscription } from './resource-subscription.js';
import { TaskSubscription } from './subscription.js';
import {
  describeRefusal,
  FairBound,
  fairKeyOf,
  type FairRefusalAnswer,
  type FairTicket,
} from '../tasks/fair-bound.js';

type HubRuntime = Pick<TaskRuntimePort, 'getTask'> & {
  readonly store?: Pick<TaskStore, 'readText'>;
};

/**
 * All open task streams of one server: routes store events (local writes, and with the Redis
 * and Postgres stores every other replica's writes, which they re-emit) to the subscriptions
 * naming that task, and has them read their tasks again when the store says events may have
 * been missed. The store listeners exist only while at least one stream is open.
 */
export class ListenHub {
  options: ListenOptions;
  readonly #runtime: HubRuntime;
  readonly #events: TaskEvents;
  readonly #byTask = new Map<string, Set<TaskSubscription>>();
  readonly #perPrincipal = new Map<string, number>();
  #bound: FairBound | undefined;
  #open = 0;
  #detach: (() => void) | undefined;

  constructor(runtime: HubRuntime, events: TaskEvents, options: Partial<ListenOptions> = {}) {
    this.#runtime = runtime;
    this.#events = events;
    this.options = { ...DEFAULT_LISTEN_OPTIONS, ...options };
  }

  /** Open streams, and task ids still routed to one. */
  get stats(): { subscriptions: number; routedTasks: number } {
    return { subscriptions: this.#open, routedTasks: this.#byTask.size };
  }

  /**
   * Counts a stream against its principal's quota and its share of the server's streams (an
   * anonymous caller's share is its connection's, `scope`): its place, or why not.
   */
  reserve(principal: string, scope?: string): FairTicket | FairRefusalAnswer | 'quota' {
    const used = this.#perPrincipal.get(principal) ?? 0;
    if (used >= this.options.maxSubscriptionsPerPrincipal) return 'quota';
    const bound = this.#fairBound();
    const ticket = bound.tryTake(fairKeyOf(principal, scope));
    if (typeof ticket === 'string') return describeRefusal('task streams', ticket, bound);
    this.#perPrincipal.set(principal, used + 1);
    return ticket;
  }

  /** The bound of the current options (streams open under older ones give back to theirs). */
  #fairBound(): FairBound {
    const capacity = this.options.maxSubscriptions;
    if (this.#bound?.capacity !== capacity) this.#bound = new FairBound({ capacity });
    return this.#bound;
  }

  /** Starts a reserved stream; the reservation is given back when the sink closes. */
  open(request: ListenRequest, principal: string, sink: ListenSink, serverInfo: JsonObject): void {
    if (request.resourceUris !== undefined) {
      this.#openResources(request, principal, sink, serverInfo);
      return;
    }
    const subscription: TaskSubscription = new TaskSubscription({
      runtime: this.#runtime,
      principal,
      request,
      sink,
      options: this.options,
      serverInfo,
      unroute: (taskId) => this.#unroute(taskId, subscription),
    });
    this.#open += 1;
    this.#attach();
    for (const id of request.taskIds) this.#route(id, subscription);
    sink.onClose(() => this.#release(principal, request.hold, subscription));
    void subscription.start();
  }

  /** A resource stream: it follows the store's events itself and counts in the same bounds. */
  #openResources(
    request: ListenRequest,
    principal: string,
    sink: ListenSink,
    serverInfo: JsonObject,
  ): void {
    const deps = { runtime: this.#runtime, events: this.#events, options: this.options };
    const subscription = new ResourceSubscription({
      store: this.#runtime.store,
      ...deps,
      principal,
      request,
      sink,
      serverInfo,
    });
    this.#open += 1;
    sink.onClose(() => this.#release(principal, request.hold));
    void subscription.start();
  }

  #route(taskId: string, subscription: TaskSubscription): void {
    let set = this.#byTask.get(taskId);
    if (set === undefined) this.#byTask.set(taskId, (set = new Set()));
    set.add(subscription);
  }

  #unroute(taskId: string, subscription: TaskSubscription): void {
    const set = this.#byTask.get(taskId);
    if (set === undefined) return;
    set.delete(subscription);
    if (set.size === 0) this.#byTask.delete(taskId);
  }

  #release(principal: string, hold: FairTicket | undefined, subscription?: TaskSubscription): void {
    hold?.give();
    for (const id of subscription?.taskIds ?? [])
      this.#unroute(id, subscription as TaskSubscription);
    const used = (this.#perPrincipal.get(principal) ?? 1) - 1;
    if (used <= 0) this.#perPrincipal.delete(principal);
    else this.#perPrincipal.set(principal, used);
    this.#open -= 1;
    if (this.#open === 0) this.#detachListeners();
  }

  #attach(): void {
    if (this.#detach !== undefined) return;
    const offUpdated = this.#events.on('task:updated', ({ task }) => {
      const subscriptions = this.#byTask.get(task.id);
      if (subscriptions !== undefined) for (const s of [...subscriptions]) s.offer(task);
    });
    const offDeleted = this.#events.on('task:deleted', ({ id }) => {
      const subscriptions = this.#byTask.get(id);
      if (subscriptions !== undefined) for (const s of [...subscriptions]) s.gone(id);
    });
    const offResync = this.#events.on('store:resync', () => {
      const subscriptions = new Set([...this.#byTask.values()].flatMap((set) => [...set]));
      for (const s of subscriptions) void s.reread();
    });
    this.#detach = () => {
      offUpdated();
      offDeleted();
      offResync();
    };
  }

  #detachListeners(): void {
    this.#detach?.();
    this.#detach = undefined;
  }
}
