import { randomBytes } from 'node:crypto';
import { Queue, WaitingError, Worker, type Job } from 'bullmq';
import type {
  DispatchHint,
  DispatchReason,
  Executor,
  Logger,
  Reservation,
} from '../../runtime/api.js';
import type { TaskStore } from '../../store/port.js';
import { newRedisClient, quitWithin } from '../../stores/redis/connect.js';
import type { RedisClient } from '../../stores/redis/scripts.js';
import { parseRedisUrl, type RedisLocation } from '../../stores/redis/url.js';
import { fairTag, QuietLook } from '../shared/fair-gate.js';
import { waitAtMost, warnTo, WorkerSlots } from '../shared/worker-slots.js';
import { standBack, TAG_MARK } from './fair-turn.js';
import { enqueueRecovered, jobOptions, type JobData, type RecoveredTask } from './recovery.js';

export const QUEUE_NAME = 'tasks';
/** The revision `newTaskRecord` gives a task; its creating write stores it as given. */
const FIRST_REVISION = 1;

export interface BullmqExecutorOptions {
  /**
   * The redis store URL, `redis://host:port/db[?prefix=NAME]` (or a Cluster's,
   * `redis://host:port?cluster=1`); the queue lives under its prefix.
   */
  connectionUrl: string;
  /**
   * Key prefix; default: the URL's `prefix`, else `taskrail`. Queue keys are
   * `<prefix>:{bull}:tasks:*`: the hash tag keeps the whole queue in one Cluster slot.
   */
  prefix?: string;
  /** `dispatch`: only enqueue (a `serve --no-worker` replica). `work`: also run jobs (`taskrail worker`). */
  mode: 'dispatch' | 'work';
  /** Jobs this process runs at once (`work` mode). Default 10. */
  concurrency?: number;
  /**
   * Deduplicates each task's jobs by its revision (BullMQ's `deduplication`), so repeated
   * dispatches of an unchanged task (crash recovery scans from every worker) collapse into one
   * job while it waits. Without it every dispatch is a new job, which is still correct: a
   * duplicate finds the lease held and returns.
   */
  store?: TaskStore;
  /**
   * BullMQ's job lock: a worker that stops renewing it for this long is presumed dead and its
   * jobs go to another worker. Default 15 s (the runtime's default lease).
   */
  lockMs?: number;
  logger?: Logger;
}

/** How long an idle worker blocks waiting for a job, in seconds (see `start`). */
const DRAIN_DELAY_S = 10;

/** Added to a delayed job's wait: see `dispatchAfter`. */
const DELAY_MARGIN_MS = 20;

/** States in which a deduplicated job has yet to start, so it will run the task. */
const WILL_RUN = new Set(['waiting', 'delayed', 'prioritized', 'waiting-children']);

const DAY_MS = 24 * 60 * 60 * 1000;

/** The id of the delayed job that wakes `taskId` (same `{bull}` slot as the queue's keys). */
function wakeKey(prefix: string, taskId: string): string {
  return `${prefix}:taskrail-wake:${taskId}`;
}

/** Principals whose tags a dispatcher keeps at most (then it starts over). */
const MAX_REMEMBERED_TAGS = 1024;

/** BullMQ's lowest priority (2^21); larger numbers are refused. */
const MAX_PRIORITY = 2 ** 21;

interface JobExtras {
  /** The task's principal, marked with `fairTag` in the job's data. */
  principal?: string | undefined;
  dedupeId?: string | undefined;
  delayMs?: number;
  priority?: number | undefined;
}

/**
 * Fair share in Redis, across every worker: the n-th unfinished task of a principal gets job
 * priority n (BullMQ takes lower numbers first, in order within one), so a principal's first
 * waiting task goes before another's backlog. Jobs without one (recovered) go first.
 */
export function fairPriority(position: number | undefined): number | undefined {
  if (position === undefined || !Number.isSafeInteger(position) || position < 1) return undefined;
  return Math.min(position, MAX_PRIORITY);
}

/**
 * Hands tasks to `taskrail worker` processes through a BullMQ queue. BullMQ only delivers:
 * the runtime's `run(taskId)` claims the task's lease in the store, so a duplicate or late
 * delivery is harmless, and cancellation reaches the running handler through store events.
 * Connections open on first use, so an idle server holds none.
 */
export class BullmqExecutor implements Executor {
  readonly #options: BullmqExecutorOptions;
  readonly #location: RedisLocation;
  readonly #prefix: string;
  readonly #nonce = randomBytes(6).toString('base64url');
  #counter = 0;
  readonly #tags = new Map<string, string>();
  #queue: Queue<JobData> | undefined;
  #queueConnection: RedisClient | undefined;
  #worker: Worker<JobData> | undefined;
  #connections: RedisClient[] = [];
  #closing: Promise<void> | undefined;
  readonly #slots: WorkerSlots;
  readonly #quietLook = new QuietLook();

  constructor(options: BullmqExecutorOptions) {
    const location = parseRedisUrl(options.connectionUrl);
    const concurrency = options.concurrency ?? 10;
    this.#slots = new WorkerSlots(concurrency, (message, error) => this.#warn(message, error));
    this.#options = { ...options, concurrency };
    this.#location = location;
    this.#prefix = `${options.prefix ?? location.prefix}:{bull}`;
  }

  get mode(): 'dispatch' | 'work' {
    return this.#options.mode;
  }

  start(run: (taskId: string) => Promise<void>): void {
    if (this.#options.mode !== 'work' || this.#worker !== undefined) return;
    const lockMs = this.#options.lockMs ?? 15_000;
    const processJob = async (job: Job<JobData>, token?: string): Promise<void> => {
      // Decided and counted in one turn when the principal is under half, so two jobs fetched
      // together cannot both pass on the same count.
      const full = this.#slots.gate.isFull(job.data.fair);
      if (full && token !== undefined && (await this.#standsBack(job, token))) {
        throw new WaitingError();
      }
      await this.#slots.runJob(job.data.fair, () => run(job.data.taskId));
    };
    this.#worker = new Worker<JobData>(QUEUE_NAME, processJob, {
      connection: this.#connection(null),
      prefix: this.#prefix,
      concurrency: this.#options.concurrency ?? 10,
      lockDuration: lockMs,
      // A dead worker's job is only cleaned up by the stall check: its task is dispatched again
      // by the runtime's recovery scan (see `dispatch`), so the check can take its time.
      stalledInterval: 2 * lockMs,
      // Task attempts are counted by the runtime; BullMQ should just keep delivering.
      maxStalledCount: 100,
      // An idle worker's blocking wait for a job (new and delayed jobs end it at once). At rest
      // each wait's end costs a script call: BullMQ's own cap on a wait (10 s, its block limit
      // for reconnections) instead of its 5 s default.
      drainDelay: DRAIN_DELAY_S,
    });
    this.#worker.on('error', (error) => this.#warn('bullmq worker error', error));
    this.#worker.on('failed', (job, error) =>
      this.#warn(`job for task ${job?.data.taskId ?? '?'} failed`, error),
    );
  }

  /**
   * In `work` mode, a free slot for a task this process creates: it starts here right after the
   * reply, leased in the creating write, without a trip through the queue. BullMQ's jobs and
   * these runs share the slots, so at most `concurrency` run at once.
   */
  reserve(principal?: string): Reservation | undefined {
    if (this.#worker === undefined || this.#closing !== undefined) return undefined;
    return this.#slots.reserve(principal);
  }

  /** Fair share: whether `job` went back to the queue for another principal's (`standBack`). */
  async #standsBack(job: Job<JobData>, token: string): Promise<boolean> {
    const queue = this.#getQueue();
    try {
      const fair = { gate: this.#slots.gate, quiet: this.#quietLook };
      return await standBack(queue, this.#queueConnection as RedisClient, fair, job, token);
    } catch (error) {
      this.#warn(`fair share could not look at the queue for task ${job.data.taskId}`, error);
      return false;
    }
  }

  /** Resolves once the worker (in `work` mode) is connected and fetching jobs. */
  async ready(): Promise<void> {
    await this.#worker?.waitUntilReady();
  }

  /** A recovery scan's finds: a few commands for the batch (see `enqueueRecovered`). */
  async dispatchRecovered(tasks: readonly { id: string; revision?: number }[]): Promise<void> {
    if (this.#closing !== undefined) return;
    if (this.#options.store === undefined) {
      for (const { id } of tasks) await this.dispatch(id, 'recovery');
      return;
    }
    const known: RecoveredTask[] = [];
    for (const { id, revision } of tasks) {
      const current = revision ?? (await this.#workingRevision(id));
      if (current !== undefined) known.push({ id, revision: current });
    }
    const queue = this.#getQueue();
    const connection = this.#queueConnection as RedisClient;
    await enqueueRecovered(connection, queue, known, (taskId) => this.#uniqueJobId(taskId));
  }

  async dispatch(taskId: string, reason?: DispatchReason, hint?: DispatchHint): Promise<void> {
    if (this.#closing !== undefined) return;
    const store = this.#options.store;
    const priority = fairPriority(hint?.position);
    const principal = hint?.principal;
    const unique = this.#uniqueJobId(taskId, principal);
    if (store === undefined) {
      await this.#add(taskId, unique, { priority, principal });
      return;
    }
    // A task this process has just created is working at its first revision: no need to read
    // it back (one round trip and a decode per create on every replica).
    const revision = reason === 'created' ? FIRST_REVISION : await this.#workingRevision(taskId);
    if (revision === undefined) return;
    const dedupeId = `${taskId}.${revision}`;
    const job = await this.#add(taskId, unique, { dedupeId, priority, principal });
    if (job === unique) return;
    // Deduplicated into an earlier job of this revision. Waiting, it will run the task; taken
    // already, it may be a dead worker's (the task is dispatched because nobody holds its
    // lease), so the task gets another job at once rather than after BullMQ's stall check.
    const state = await this.#getQueue().getJobState(job);
    if (!WILL_RUN.has(state)) await this.#add(taskId, `${unique}.again`);
  }

  /**
   * A waiting task's run as a BullMQ delayed job, kept in Redis: any worker takes it when its
   * time comes, also after this process is gone. Deduplicated by the task's revision as other
   * dispatches are, so a recovery scan after the wake joins this job. BullMQ dates the delay by
   * this process's clock, the store judges the wait by Redis's, so a margin is added (a claim
   * that comes early is refused, and the next recovery scan runs the task).
   */
  async dispatchAfter(taskId: string, delayMs: number): Promise<void> {
    if (this.#closing !== undefined) return;
    const store = this.#options.store;
    const task = await store?.get(taskId);
    if (store !== undefined && task?.status !== 'working') return;
    // Woken, the task takes its place in its principal's line as a new one would, behind
    // another principal's first task (not ahead of every prioritized job).
    const principal = task?.principal;
    const jobId = this.#uniqueJobId(taskId, principal);
    const unfinished =
      principal === undefined ? undefined : await store?.countUnfinished?.(principal, MAX_PRIORITY);
    await this.#add(taskId, jobId, {
      dedupeId: task === undefined ? undefined : `${taskId}.${task.revision}`,
      delayMs: delayMs + DELAY_MARGIN_MS,
      principal,
      priority: fairPriority(unfinished),
    });
    // The delayed job is the task's until it runs: `forget` removes it when the task ends or
    // is deleted first. The pointer outlives the wait by a day at most.
    const pointer = wakeKey(this.#prefix, taskId);
    await this.#connectionOfQueue().set(pointer, jobId, 'PX', delayMs + DAY_MS);
    // Cancelled or swept while the job was being added: its `forget` may have come before the
    // pointer, so the job is removed here.
    const now = await store?.get(taskId);
    if (store !== undefined && now?.status !== 'working') await this.forget([taskId]);
  }

  /**
   * The tasks ended (cancelled) or were deleted (expired) before their delayed jobs ran: the
   * jobs are removed, so a cycle of sleeping tasks cancelled does not grow the queue.
   */
  async forget(taskIds: readonly string[]): Promise<void> {
    if (this.#closing !== undefined || taskIds.length === 0) return;
    const connection = this.#connectionOfQueue();
    const keys = taskIds.map((id) => wakeKey(this.#prefix, id));
    const jobIds = await connection.mget(...keys);
    const queue = this.#getQueue();
    for (const jobId of jobIds) if (jobId !== null) await queue.remove(jobId);
    await connection.del(...keys);
  }

  #connectionOfQueue(): RedisClient {
    this.#getQueue();
    return this.#queueConnection as RedisClient;
  }

  /**
   * A job id of its own for each dispatch. A job carrying a principal's tag (`fairTag`, in its
   * data) ends in `~<tag>` too, so fair share's look at the queue reads the tags from the ids
   * it lists instead of one job hash per job (see fair-turn.ts).
   */
  #uniqueJobId(taskId: string, principal?: string): string {
    const unique = `${taskId}.${this.#nonce}.${++this.#counter}`;
    return principal === undefined ? unique : `${unique}${TAG_MARK}${this.#tagOf(principal)}`;
  }

  /** `fairTag`, remembered: a digest per dispatch (twice: id and data) for a few principals. */
  #tagOf(principal: string): string {
    let tag = this.#tags.get(principal);
    if (tag !== undefined) return tag;
    if (this.#tags.size >= MAX_REMEMBERED_TAGS) this.#tags.clear();
    tag = fairTag(principal);
    this.#tags.set(principal, tag);
    return tag;
  }

  async #workingRevision(taskId: string): Promise<number | undefined> {
    const task = await this.#options.store?.get(taskId);
    return task === undefined || task.status !== 'working' ? undefined : task.revision;
  }

  /**
   * Adds a job and returns the id of the job that will carry it: `jobId`, or with `dedupeId`
   * the earlier job BullMQ deduplicated it into. BullMQ drops the deduplication key when that
   * job completes or fails (jobs are removed on completion, so a key never outlives its job),
   * and a new revision (the task was answered, or resumed) is a new id anyway.
   */
  async #add(taskId: string, jobId: string, extra: JobExtras = {}): Promise<string> {
    const { dedupeId, delayMs, priority, principal } = extra;
    const job = await this.#getQueue().add(
      'run',
      principal === undefined ? { taskId } : { taskId, fair: this.#tagOf(principal) },
      {
        ...jobOptions(jobId),
        ...(dedupeId === undefined ? {} : { deduplication: { id: dedupeId } }),
        ...(delayMs === undefined ? {} : { delay: delayMs }),
        ...(priority === undefined ? {} : { priority }),
      },
    );
    return job.id ?? jobId;
  }

  /**
   * Stops fetching jobs and waits up to `graceMs` for running ones. The runtime then aborts
   * whatever still runs; `closed()` resolves when those runs have returned and connections closed.
   */
  async stop(graceMs: number): Promise<void> {
    this.#closing ??= this.#close();
    await waitAtMost(this.#closing, graceMs);
  }

  closed(): Promise<void> {
    return this.#closing ?? Promise.resolve();
  }

  async #close(): Promise<void> {
    await Promise.allSettled([
      this.#worker?.close(),
      this.#queue?.close(),
      ...this.#slots.inFlight,
    ]);
    await Promise.all(this.#connections.map((connection) => quitWithin(connection)));
  }

  #getQueue(): Queue<JobData> {
    if (this.#queue !== undefined) return this.#queue;
    this.#queueConnection = this.#connection(3);
    this.#queue = new Queue<JobData>(QUEUE_NAME, {
      connection: this.#queueConnection,
      prefix: this.#prefix,
    });
    return this.#queue;
  }

  /** Workers need `maxRetriesPerRequest: null` (blocking commands); producers should fail. */
  #connection(maxRetriesPerRequest: number | null): RedisClient {
    const connection = newRedisClient(this.#location, { maxRetriesPerRequest });
    let reported = false; // once per outage, not once per reconnection attempt
    connection.on('error', (error: Error) => {
      if (!reported) this.#warn('redis connection lost (reconnecting)', error);
      reported = true;
    });
    connection.on('ready', () => (reported = false));
    this.#connections.push(connection);
    return connection;
  }

  #warn(message: string, error: unknown): void {
    warnTo(this.#options.logger, message, error);
  }
}

export function createBullmqExecutor(options: BullmqExecutorOptions): BullmqExecutor {
  return new BullmqExecutor(options);
}
