import { setTimeout as sleep } from 'node:timers/promises';
import type { DetailedTask } from './wire-types.js';
import { runListenStream, type ListenConnection, type StreamEnd } from './listen-stream.js';
import type { Answer } from './task-rpc.js';
import { backoffDelayMs, type Backoff } from '../task/backoff.js';
import { timerDelay } from '../task/timers.js';

/** Re-subscribing after a broken stream: 200 ms, doubling per failure, up to 5 s. */
const RESUBSCRIBE: Backoff = { backoffMs: 200, maxBackoffMs: 5000 };

export interface PushOptions {
  /** Safety-net poll interval while a task is followed on a live stream; default 30 s. */
  slowPollMs?: number;
  /** Most task ids one listen stream names; default 100 (the taskrail server's default limit). */
  maxTaskIdsPerStream?: number;
}

/** What a `TaskWatch` needs from push: one follower per watched task. */
export interface TaskPush {
  follow(taskId: string): Follower;
}

export interface Follower {
  /**
   * Waits for the next pushed state of the task, or until it is time to poll: `pollAt`, pushed
   * back to the slow poll while the task's stream is live, and brought forward to now after the
   * stream broke or fell back (the caller then re-reads with `tasks/get`, so nothing is missed).
   */
  next(pollAt: number, signal?: AbortSignal): Promise<DetailedTask | undefined>;
  close(): void;
}

type PushState = 'queued' | 'live' | 'off';

/** One followed task: its push state, the latest pushed state, and who waits on it. */
interface Followed {
  followers: number;
  state: PushState;
  latest: DetailedTask | undefined;
  seq: number;
  /** Bumped whenever pushes may have been missed: followers re-read once. */
  resync: number;
  terminal: boolean;
  waiters: Set<() => void>;
}

interface OpenStream {
  ids: Set<string>;
  controller: AbortController;
}

const BATCH_MS = 5;
/**
 * The least a stream waits to open. A host on its server's machine is woken by the create's
 * reply on the server's own CPU, where it runs until it blocks while the server, which has the
 * task to start, waits. Blocking for a millisecond here hands the CPU back first; the stream's
 * acknowledgement brings whatever happened meanwhile (docs/benchmarks.md, "Tenth pass").
 */
const OPEN_AFTER_MS = 1;
const GIVE_UP_AFTER = 3;

/**
 * Follows tasks of one server over `subscriptions/listen` streams, falling back to polling for
 * any task the server will not push (an older server, a limit, a broken stream). Tasks followed
 * within a millisecond of each other share one stream, as do, under a burst of follows, those
 * followed within a few milliseconds of each other.
 */
export class TaskSubscriber implements TaskPush {
  readonly #conn: ListenConnection;
  readonly #slowPollMs: number;
  readonly #maxIds: number;
  readonly #tasks = new Map<string, Followed>();
  readonly #streams = new Set<OpenStream>();
  readonly #queue = new Set<string>();
  /** Cancels the scheduled opening of a stream for the queued ids, if one is scheduled. */
  #cancelFlush: (() => void) | undefined;
  #lastFlushAt = -Infinity;
  #unsupported = false;
  #failures = 0;
  #closed = false;

  constructor(conn: ListenConnection, options: PushOptions = {}) {
    this.#conn = conn;
    this.#slowPollMs = options.slowPollMs ?? 30_000;
    this.#maxIds = options.maxTaskIdsPerStream ?? 100;
  }

  /** False once the server showed it does not push task notifications. */
  get supported(): boolean {
    return !this.#unsupported;
  }

  get openStreams(): number {
    return this.#streams.size;
  }

  follow(taskId: string): Follower {
    let task = this.#tasks.get(taskId);
    if (task === undefined) {
      task = {
        followers: 0,
        state: 'off',
        latest: undefined,
        seq: 0,
        resync: 0,
        terminal: false,
        waiters: new Set(),
      };
      this.#tasks.set(taskId, task);
      this.#enqueue(taskId);
    }
    task.followers += 1;
    return this.#follower(taskId, task);
  }

  /** Ends every stream; followers fall back to polling. */
  close(): void {
    this.#closed = true;
    this.#cancelFlush?.();
    for (const stream of this.#streams) stream.controller.abort();
    this.#streams.clear();
    for (const task of this.#tasks.values()) this.#setState(task, 'off', false);
  }

  #follower(taskId: string, task: Followed): Follower {
    let seen = 0;
    let resynced = task.resync;
    let closed = false;
    return {
      next: async (pollAt, signal) => {
        const armedAt = Date.now();
        // A resync re-reads with tasks/get, but still no sooner than the poll interval allows.
        let mustPoll = false;
        for (;;) {
          signal?.throwIfAborted();
          if (task.seq > seen && task.latest !== undefined) {
            seen = task.seq;
            return task.latest;
          }
          if (task.resync > resynced) {
            resynced = task.resync;
            mustPoll = true;
          }
          // While the stream is being opened its acknowledgement brings the task's state: polling
          // meanwhile would only race it. A stream that fails wakes this wait (state 'off').
          const pushing = task.state === 'live' || task.state === 'queued';
          const deadline =
            pushing && !mustPoll ? Math.max(pollAt, armedAt + this.#slowPollMs) : pollAt;
          if (Date.now() >= deadline) return undefined;
          await wake(task, deadline - Date.now(), signal);
        }
      },
      close: () => {
        if (closed) return;
        closed = true;
        this.#unfollow(taskId, task);
      },
    };
  }

  #unfollow(taskId: string, task: Followed): void {
    task.followers -= 1;
    if (task.followers > 0) return;
    this.#tasks.delete(taskId);
    this.#queue.delete(taskId);
    for (const stream of this.#streams) {
      if (!stream.ids.delete(taskId) || [...stream.ids].some((id) => this.#tasks.has(id))) continue;
      stream.controller.abort();
      this.#streams.delete(stream);
    }
  }

  #enqueue(taskId: string): void {
    const task = this.#tasks.get(taskId);
    if (this.#closed || this.#unsupported || task === undefined || task.terminal) return;
    task.state = 'queued';
    this.#queue.add(taskId);
    if (this.#cancelFlush !== undefined) return;
    // After a quiet spell the stream opens OPEN_AFTER_MS later (tasks followed meanwhile share
    // it); while streams are being opened often, followers wait up to BATCH_MS to share.
    const sinceLast = performance.now() - this.#lastFlushAt;
    const timer = setTimeout(() => this.#flush(), Math.max(OPEN_AFTER_MS, BATCH_MS - sinceLast));
    this.#cancelFlush = () => clearTimeout(timer);
  }

  #flush(): void {
    this.#cancelFlush = undefined;
    this.#lastFlushAt = performance.now();
    const ids = [...this.#queue];
    this.#queue.clear();
    for (let i = 0; i < ids.length; i += this.#maxIds)
      void this.#open(ids.slice(i, i + this.#maxIds));
  }

  async #open(ids: string[]): Promise<void> {
    const stream: OpenStream = { ids: new Set(ids), controller: new AbortController() };
    this.#streams.add(stream);
    const end = await runListenStream(
      this.#conn,
      ids,
      {
        acknowledged: (acked, initialState) => this.#acknowledged(stream, acked, initialState),
        task: (pushed) => this.#pushed(stream, pushed),
        invalid: (taskId) => this.#invalid(taskId),
      },
      stream.controller.signal,
    );
    this.#streams.delete(stream);
    if (end.kind !== 'closed') await this.#ended(stream, end);
  }

  #acknowledged(stream: OpenStream, acked: string[] | undefined, initialState: boolean): void {
    if (acked === undefined) {
      this.#unsupported = true;
      stream.controller.abort();
      for (const id of stream.ids) {
        const task = this.#tasks.get(id);
        if (task !== undefined) this.#setState(task, 'off', false);
      }
      return;
    }
    this.#failures = 0;
    const accepted = new Set(acked);
    for (const id of stream.ids) {
      const task = this.#tasks.get(id);
      if (task === undefined) continue;
      if (!accepted.has(id)) stream.ids.delete(id);
      // Without the initial state, whatever changed before the ack is read back once.
      this.#setState(task, accepted.has(id) ? 'live' : 'off', !accepted.has(id) || !initialState);
    }
  }

  #pushed(stream: OpenStream, pushed: DetailedTask): void {
    const task = this.#tasks.get(pushed.taskId);
    if (task === undefined || !stream.ids.has(pushed.taskId)) return;
    task.latest = pushed;
    task.seq += 1;
    if (
      pushed.status === 'completed' ||
      pushed.status === 'failed' ||
      pushed.status === 'cancelled'
    ) {
      task.terminal = true;
      stream.ids.delete(pushed.taskId);
    }
    wakeAll(task);
  }

  #invalid(taskId: string | undefined): void {
    const task = taskId === undefined ? undefined : this.#tasks.get(taskId);
    if (task !== undefined) this.#setState(task, task.state, true);
  }

  /** After a stream ends: re-read its unfinished tasks now, and re-subscribe them if it broke. */
  async #ended(stream: OpenStream, end: Exclude<StreamEnd, { kind: 'closed' }>): Promise<void> {
    if (end.kind === 'refused' && end.unsupported) this.#unsupported = true;
    const retry = end.kind === 'broken';
    if (retry && !end.acknowledged && ++this.#failures >= GIVE_UP_AFTER) this.#unsupported = true;
    const unfinished = [...stream.ids].flatMap((id) => {
      const task = this.#tasks.get(id);
      return task === undefined || task.terminal ? [] : [[id, task] as const];
    });
    for (const [, task] of unfinished) this.#setState(task, 'off', true);
    if (!retry || this.#unsupported || unfinished.length === 0) return;
    await sleep(backoffDelayMs(RESUBSCRIBE, this.#failures + 1), undefined, { ref: false });
    for (const [id] of unfinished) this.#enqueue(id);
  }

  #setState(task: Followed, state: PushState, resync: boolean): void {
    task.state = state;
    if (resync) task.resync += 1;
    wakeAll(task);
  }
}

function wakeAll(task: Followed): void {
  for (const waiter of [...task.waiters]) waiter();
}

/** Resolves after `ms`, or as soon as the task's push state changes; rejects on abort. */
function wake(task: Followed, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (): void => {
      clearTimeout(timer);
      task.waiters.delete(done);
      signal?.removeEventListener('abort', aborted);
      resolve();
    };
    const aborted = (): void => {
      done();
      reject(signal?.reason);
    };
    const timer = setTimeout(done, timerDelay(ms));
    task.waiters.add(done);
    signal?.addEventListener('abort', aborted, { once: true });
  });
}

/**
 * The watch loop's wait: a pushed state when one arrives, else undefined when it is time to
 * poll. Without push it is the plain sleep until `pollAt`.
 */
export async function waitForTurn(
  follower: Follower | undefined,
  pollAt: number,
  signal?: AbortSignal,
): Promise<Answer<DetailedTask> | undefined> {
  if (follower !== undefined) {
    const pushed = await follower.next(pollAt, signal);
    return pushed === undefined ? undefined : { ok: true, value: pushed };
  }
  const wait = pollAt - Date.now();
  if (wait > 0) await sleep(timerDelay(wait), undefined, signal ? { signal } : {});
  else signal?.throwIfAborted();
  return undefined;
}
