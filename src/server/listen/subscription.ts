import { encodeDetailedTask, internalError, type RequestId } from '../../protocol/index.js';
import { isPlausibleTaskId } from '../../task/ids.js';
import type { JsonObject, TaskRecord } from '../../task/record.js';
import { isTerminal } from '../../task/status.js';
import type { TaskRuntimePort } from '../tasks/runtime-port.js';
import type { ListenOptions } from './options.js';
import type { ListenRequest } from './request.js';
import type { ListenSink } from './sse-sink.js';
import {
  META,
  SUBSCRIPTION_ACK_NOTIFICATION,
  TASKRAIL_META,
  TASKS_NOTIFICATION,
} from '../../protocol/constants.js';
import { timerDelay } from '../../task/timers.js';

export const SUBSCRIPTION_ID_META = META.subscriptionId;
/**
 * Set on our acknowledgement: every acknowledged task's current state follows at once, so a
 * taskrail client need not re-read them with `tasks/get` (other clients may ignore it).
 */
export const INITIAL_STATE_META = TASKRAIL_META.initialState;
const SERVER_INFO_META = META.serverInfo;

export interface SubscriptionDeps {
  runtime: Pick<TaskRuntimePort, 'getTask'>;
  principal: string;
  request: ListenRequest;
  sink: ListenSink;
  options: ListenOptions;
  serverInfo: JsonObject;
  /** Stop routing events of a task to this subscription (not acknowledged, or finished). */
  unroute: (taskId: string) => void;
}

/**
 * One open `subscriptions/listen` stream for task ids: acknowledgement, the current state of each
 * acknowledged task, then `notifications/tasks` on every later revision until all are terminal
 * (or gone), then the listen result. Store events that arrive while the first reads are in flight
 * are held back and merged by revision, so nothing written after the subscription exists is lost.
 */
export class TaskSubscription {
  readonly id: RequestId;
  readonly principal: string;
  readonly #deps: SubscriptionDeps;
  /** Acknowledged tasks not yet terminal → the last revision sent. */
  readonly #live = new Map<string, number>();
  #held: Map<string, TaskRecord> | undefined = new Map();
  #timer: NodeJS.Timeout | undefined;
  /** A notification was held back while the reader was behind: catch up when it drains. */
  #behind = false;
  /** The listen result was written. */
  #finished = false;

  constructor(deps: SubscriptionDeps) {
    this.#deps = deps;
    this.id = deps.request.id;
    this.principal = deps.principal;
    deps.sink.onClose(() => this.#stopTimer());
    deps.sink.onDrain(() => this.#caughtUp());
  }

  get taskIds(): readonly string[] {
    return this.#deps.request.taskIds;
  }

  get liveCount(): number {
    return this.#live.size;
  }

  async start(): Promise<void> {
    const { runtime, request, principal } = this.#deps;
    let found: (TaskRecord | undefined)[];
    try {
      found = await Promise.all(
        request.taskIds.map((id) =>
          isPlausibleTaskId(id) ? runtime.getTask(id, principal) : Promise.resolve(undefined),
        ),
      );
    } catch {
      this.#write({ jsonrpc: '2.0', id: this.id, error: internalError().error });
      this.#deps.sink.end();
      return;
    }
    this.#acknowledge(found);
  }

  /** A store event about one of our task ids. */
  offer(task: TaskRecord): void {
    if (this.#deps.sink.closed || task.principal !== this.principal) return;
    if (this.#held !== undefined) {
      const held = this.#held.get(task.id);
      if (held === undefined || held.revision < task.revision) this.#held.set(task.id, task);
      return;
    }
    const sent = this.#live.get(task.id);
    if (sent === undefined || task.revision <= sent) return;
    this.#notify(task);
    this.#deps.sink.flush();
    if (this.#live.size === 0) setImmediate(() => this.#finishWhenDone());
  }

  /** The task was deleted or expired: nothing more will come for it. */
  gone(taskId: string): void {
    if (this.#held !== undefined) return void this.#held.delete(taskId);
    if (this.#live.delete(taskId)) this.#deps.unroute(taskId);
    this.#finishWhenDone();
  }

  #acknowledge(found: (TaskRecord | undefined)[]): void {
    if (this.#deps.sink.closed) return;
    const visible = found.filter((task): task is TaskRecord => task !== undefined);
    const shown = new Set(visible.map((task) => task.id));
    for (const id of this.taskIds) if (!shown.has(id)) this.#deps.unroute(id);
    this.#write({
      jsonrpc: '2.0',
      method: SUBSCRIPTION_ACK_NOTIFICATION,
      params: {
        _meta: { [SUBSCRIPTION_ID_META]: this.id, [INITIAL_STATE_META]: true },
        notifications: { taskIds: [...shown] },
      },
    });
    const held = this.#held ?? new Map<string, TaskRecord>();
    this.#held = undefined;
    for (const read of visible) {
      const later = held.get(read.id);
      this.#live.set(read.id, 0);
      this.#notify(later !== undefined && later.revision > read.revision ? later : read);
    }
    if (!this.#finishWhenDone()) this.#startTimer();
  }

  /**
   * Sends the task's state, unless the reader is behind: then nothing is queued and the task's
   * last sent revision stays, so the re-read on drain sends only each task's latest state
   * (unsent bytes stay near LISTEN_HIGH_WATER_BYTES however often tasks change).
   */
  #notify(task: TaskRecord): void {
    if (this.#deps.sink.backedUp) {
      this.#behind = true;
      return;
    }
    const params = { _meta: { [SUBSCRIPTION_ID_META]: this.id }, ...encodeDetailedTask(task) };
    this.#write({ jsonrpc: '2.0', method: TASKS_NOTIFICATION, params });
    if (!isTerminal(task.status)) return void this.#live.set(task.id, task.revision);
    this.#live.delete(task.id);
    this.#deps.unroute(task.id);
  }

  /**
   * Ends the stream gracefully (the listen result) once no acknowledged task can change. After a
   * pushed final state it runs a turn later: written with the state, the result and the
   * response's end reach the client in the same read, and a client handles the end of the
   * response (its parser, its connection pool) before it can act on the state
   * (docs/benchmarks.md, "Twelfth pass").
   */
  #finishWhenDone(): boolean {
    if (this.#live.size > 0 || this.#deps.sink.closed || this.#finished) return false;
    this.#finished = true;
    const result = {
      resultType: 'complete',
      _meta: { [SUBSCRIPTION_ID_META]: this.id, [SERVER_INFO_META]: this.#deps.serverInfo },
    };
    this.#write({ jsonrpc: '2.0', id: this.id, result });
    this.#deps.sink.end();
    return true;
  }

  #write(message: object): void {
    this.#deps.sink.send(message);
  }

  #startTimer(): void {
    this.#timer = setInterval(() => void this.#tick(), timerDelay(this.#deps.options.keepAliveMs));
    this.#timer.unref();
  }

  #stopTimer(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #caughtUp(): void {
    if (!this.#behind) return;
    this.#behind = false;
    void this.reread();
  }

  /** Keep-alive, and a re-read that repairs any event the store could not deliver. */
  async #tick(): Promise<void> {
    if (!this.#deps.sink.keepAlive()) return;
    await this.reread();
  }

  /** Reads every live task again and sends what changed (events may have been missed). */
  async reread(): Promise<void> {
    if (this.#held !== undefined || this.#deps.sink.closed) return;
    for (const id of [...this.#live.keys()]) {
      try {
        const task = await this.#deps.runtime.getTask(id, this.principal);
        if (task === undefined) this.gone(id);
        else this.offer(task);
      } catch {
        // The store is unreachable: try again on the next tick; the client's slow poll covers it.
      }
    }
  }
}
