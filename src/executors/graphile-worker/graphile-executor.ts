import type { Runner, WorkerUtils } from 'graphile-worker';
import type pg from 'pg';
import type { DispatchReason, Executor, Logger, Reservation } from '../../runtime/api.js';
import type { TaskStore } from '../../store/port.js';
import { loadPg } from '../../stores/postgres/driver.js';
import { storeError } from '../../stores/postgres/errors.js';
import { quoteIdent } from '../../stores/postgres/migrations.js';
import { parsePostgresUrl } from '../../stores/postgres/url.js';
import { waitAtMost, warnTo, WorkerSlots } from '../shared/worker-slots.js';
import { addRunFunction, installEnqueueTrigger } from './enqueue-trigger.js';
import { EventEmitter } from 'node:events';
import type { WorkerEvents } from 'graphile-worker';
import { FairFlags } from './fair-flags.js';
import { FetchNudges, POLL_INTERVAL_MS } from './fetch-nudges.js';
import { OutageLog } from './outage-log.js';
import { loadGraphileWorker, type GraphileWorkerModule } from './load.js';
import { RunnerSupervisor } from './runner-supervisor.js';

export const TASK_IDENTIFIER = 'taskrail_run';

export interface GraphileExecutorOptions {
  /** The postgres store URL; jobs live in the schema `<store schema>_jobs`. */
  connectionUrl: string;
  /** `dispatch`: only add jobs (a `serve --no-worker` replica). `work`: also run them. */
  mode: 'dispatch' | 'work';
  /** Jobs this process runs at once (`work` mode). Default 10. */
  concurrency?: number;
  /**
   * Names each job after the task's revision, so repeated dispatches of an unchanged task (the
   * recovery scans of every worker) collapse into one job while it waits.
   */
  store?: TaskStore;
  logger?: Logger;
}

interface JobPayload {
  taskId: string;
  /** The task's principal as `fairTag` marks it (set by the enqueue trigger). */
  fair?: string;
}

/** graphile-worker's connections and helpers, set up once. */
interface Engine {
  graphile: GraphileWorkerModule;
  pool: pg.Pool;
  utils: WorkerUtils;
}

/**
 * Hands tasks to worker processes through graphile-worker (jobs in Postgres, picked up through
 * LISTEN/NOTIFY). graphile-worker only delivers: the runtime's `run(taskId)` claims the task's
 * lease in the store, so a duplicate or late delivery is harmless, and a killed worker's task
 * is found by the store's lease expiry and dispatched again (graphile-worker itself would hold
 * a dead worker's job for hours). New and resumed tasks get their job from a trigger in the
 * store's own transaction (enqueue-trigger.ts); only recovery scans add jobs from here. A
 * runner that graphile-worker stops by itself is replaced at once (runner-supervisor.ts).
 *
 * graphile-worker's own connections commit without waiting for the disk
 * (`synchronous_commit=off`): its job rows are only a wake-up. A job lost in a database crash is
 * a task left runnable, which the next recovery scan dispatches again; a fetch or completion
 * lost is a job run twice, which the lease turns away. The task rows and leases, written
 * through the store, stay fully durable.
 */
export class GraphileExecutor implements Executor {
  readonly #options: GraphileExecutorOptions;
  readonly #url: string;
  readonly #storeSchema: string;
  readonly #schema: string;
  readonly #slots: WorkerSlots;
  #engine: Promise<Engine> | undefined;
  #runner: RunnerSupervisor | undefined;
  /** The current runner's nudges (a replaced runner's stop with it). */
  #nudges: FetchNudges | undefined;
  #closing: Promise<void> | undefined;
  /** Set once the store's writes add jobs themselves (the trigger is installed). */
  #enqueuedByStore = false;
  readonly #outages = new OutageLog((message, error) => this.#warn(message, error));

  constructor(options: GraphileExecutorOptions) {
    const location = parsePostgresUrl(options.connectionUrl);
    const concurrency = options.concurrency ?? 10;
    this.#slots = new WorkerSlots(concurrency, (message, error) => this.#warn(message, error));
    this.#options = { ...options, concurrency };
    this.#url = location.connectUrl;
    this.#storeSchema = location.schema;
    this.#schema = `${location.schema}_jobs`;
  }

  get mode(): 'dispatch' | 'work' {
    return this.#options.mode;
  }

  start(run: (taskId: string) => Promise<void>): void {
    if (this.#options.mode !== 'work' || this.#runner !== undefined) return;
    this.#runner = new RunnerSupervisor(
      () => this.#startRunner(run),
      (message, error) => this.#warn(message, error),
    );
    this.#runner
      .started()
      .catch((error: unknown) => this.#warn('graphile-worker did not start', error));
  }

  /**
   * Resolves once graphile-worker's schema and the store's enqueue trigger are in place and, in
   * `work` mode after `start`, the worker is connected and listening for jobs. Tasks created
   * before this dispatch themselves the slower way (a job added after the create).
   */
  async ready(): Promise<void> {
    await this.#getEngine();
    await this.#runner?.started();
  }

  /** In `work` mode, a free slot for a task this process creates and starts at once. */
  reserve(principal?: string): Reservation | undefined {
    if (this.#runner === undefined || this.#closing !== undefined) return undefined;
    return this.#slots.reserve(principal);
  }

  async dispatch(taskId: string, reason: DispatchReason = 'recovery'): Promise<void> {
    try {
      await this.#dispatch(taskId, reason);
    } catch (error) {
      // graphile-worker's failures are node-postgres's: the job queue's database is the store's.
      throw storeError(error, `graphile-worker job queue ${this.#schema}`);
    }
  }

  async #dispatch(taskId: string, reason: DispatchReason): Promise<void> {
    if (this.#closing !== undefined) return;
    if (reason !== 'recovery' && this.#enqueuedByStore) return;
    if (this.#options.store !== undefined) {
      // Added as the store's triggers add jobs: keyed by the task's revision, with its
      // principal's tag and fair-share place, so a recovered task does not jump the queue.
      const { pool } = await this.#getEngine();
      await pool.query(this.#addRecovered, [taskId]);
      return;
    }
    const { utils } = await this.#getEngine();
    // 'replace': a waiting job of this key is reused; one that is running (perhaps on a dead
    // worker) keeps running and a new job is added beside it.
    await utils.addJob(TASK_IDENTIFIER, { taskId } satisfies JobPayload, {
      jobKey: `${taskId}.any`,
      jobKeyMode: 'replace',
      maxAttempts: 1,
    });
  }

  get #addRecovered(): string {
    const s = this.#storeSchema;
    return `SELECT ${addRunFunction(s)}(id, revision, principal, NULL) FROM ${quoteIdent(s)}.tasks
      WHERE id = $1 AND status = 'working'`;
  }

  /**
   * A waiting task's run as a job at `run_at`, judged by the database's clock like the wait.
   * With the store's trigger installed, the wait's own write added it already.
   */
  async dispatchAfter(taskId: string, delayMs: number): Promise<void> {
    if (this.#closing !== undefined || this.#enqueuedByStore) return;
    const jobKey = await this.#jobKey(taskId);
    if (jobKey === undefined) return;
    const { utils } = await this.#getEngine();
    await utils.addJob(TASK_IDENTIFIER, { taskId } satisfies JobPayload, {
      jobKey,
      jobKeyMode: 'replace',
      maxAttempts: 1,
      runAt: new Date(Date.now() + delayMs),
    });
    // Without the trigger's notice, only this process knows when the job is due.
    this.#nudges?.wakeIn(delayMs);
  }

  async stop(graceMs: number): Promise<void> {
    this.#closing ??= this.#close();
    await waitAtMost(this.#closing, graceMs);
  }

  closed(): Promise<void> {
    return this.#closing ?? Promise.resolve();
  }

  async #startRunner(run: (taskId: string) => Promise<void>): Promise<Runner> {
    const { graphile, pool } = await this.#getEngine();
    const events = new EventEmitter() as WorkerEvents;
    const fair = new FairFlags(pool, this.#schema, TASK_IDENTIFIER, this.#slots);
    fair.watch(events);
    const nudges = new FetchNudges(pool, this.#schema, TASK_IDENTIFIER);
    nudges.watch(events);
    const runner = await graphile
      .run({
        pgPool: pool,
        schema: this.#schema,
        concurrency: this.#options.concurrency ?? 10,
        noHandleSignals: true,
        forbiddenFlags: fair.forbidden,
        events,
        logger: this.#graphileLogger(graphile),
        preset: {
          worker: {
            // Fetches are started by notices and nudges (fetch-nudges.ts); the poll is a net.
            pollInterval: POLL_INTERVAL_MS,
            // Batching (even with no delay) routes a failed job completion to graphile-worker's
            // own handler, which logs it and shuts the runner down (the supervisor starts a new
            // one). Without it (-1) the completion is not awaited and fails as an unhandled
            // rejection.
            completeJobBatchDelay: 0,
            failJobBatchDelay: 0,
          },
        },
        taskList: {
          [TASK_IDENTIFIER]: async (payload) => {
            const { taskId, fair: tag } = payload as JobPayload;
            // The task's own state is in the store; a failed job would only linger in the queue.
            await this.#slots
              .runJob(tag, () => run(taskId))
              .catch((error: unknown) => this.#warn(`running task ${taskId} failed`, error));
          },
        },
      })
      .catch((error: unknown) => {
        nudges.stop();
        throw error;
      });
    this.#nudges?.stop();
    this.#nudges = nudges;
    void runner.promise.finally(() => nudges.stop()).catch(() => undefined);
    return runner;
  }

  async #close(): Promise<void> {
    this.#slots.close(); // a fetch waiting for a slot goes on, so the runner can stop
    await Promise.allSettled([this.#runner?.stop(), ...this.#slots.inFlight]);
    const engine = await this.#engine?.catch(() => undefined);
    await Promise.resolve(engine?.utils.release()).catch(() => undefined);
    await engine?.pool.end().catch(() => undefined);
  }

  /** `<taskId>.<revision>`: a new job for every change (resumption), one while it waits. */
  async #jobKey(taskId: string): Promise<string | undefined> {
    const store = this.#options.store;
    if (store === undefined) return `${taskId}.any`;
    const task = await store.get(taskId);
    if (task === undefined || task.status !== 'working') return undefined;
    return `${taskId}.${task.revision}`;
  }

  #getEngine(): Promise<Engine> {
    this.#engine ??= this.#connect();
    this.#engine.catch(() => (this.#engine = undefined));
    return this.#engine;
  }

  async #connect(): Promise<Engine> {
    const [graphile, pgModule] = await Promise.all([loadGraphileWorker(), loadPg()]);
    const pool = new pgModule.Pool({
      connectionString: this.#url,
      // The LISTEN connection, one per running job, and room for recovery dispatches.
      max: (this.#options.concurrency ?? 10) + 3,
      // Kept through a poll interval of rest (pg's default closes one idle 10 s), so a fetch at
      // rest does not open a connection each time.
      idleTimeoutMillis: 2 * POLL_INTERVAL_MS,
      connectionTimeoutMillis: 5_000,
      options: '-c synchronous_commit=off',
    });
    const logger = this.#graphileLogger(graphile);
    pool.on('error', (error) => this.#outages.warn('graphile-worker connection lost', error));
    pool.on('connect', (client) => {
      this.#outages.connected();
      client.on('error', () => undefined); // the next query fails
    });
    try {
      const utils = await graphile.makeWorkerUtils({ pgPool: pool, schema: this.#schema, logger });
      const client = await pool.connect();
      try {
        await installEnqueueTrigger(client, this.#storeSchema, this.#schema, TASK_IDENTIFIER);
      } finally {
        client.release();
      }
      this.#enqueuedByStore = true;
      return { graphile, pool, utils };
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw error;
    }
  }

  /** graphile-worker's warnings and errors go to taskrail's logger; its chatter does not. */
  #graphileLogger(graphile: GraphileWorkerModule): InstanceType<GraphileWorkerModule['Logger']> {
    return new graphile.Logger(() => (level, message, meta) => {
      if (level === 'error' || level === 'warning') {
        this.#outages.warn('graphile-worker', message, meta);
      }
    });
  }

  #warn(message: string, error: unknown): void {
    warnTo(this.#options.logger, message, error);
  }
}

export function createGraphileExecutor(options: GraphileExecutorOptions): GraphileExecutor {
  return new GraphileExecutor(options);
}
