import type { Runner, WorkerUtils } from 'graphile-worker';
import type { Executor, Logger, Reservation } from '../../runtime/api.js';
import type { TaskStore } from '../../store/port.js';
import { parsePostgresUrl } from '../../stores/postgres/url.js';
import { Slots } from '../shared/slots.js';
import { loadGraphileWorker, type GraphileWorkerModule } from './load.js';

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
}

/**
 * Hands tasks to worker processes through graphile-worker (jobs in Postgres, picked up through
 * LISTEN/NOTIFY). graphile-worker only delivers: the runtime's `run(taskId)` claims the task's
 * lease in the store, so a duplicate or late delivery is harmless, and a killed worker's task
 * is found by the store's lease expiry and dispatched again (graphile-worker itself would hold
 * a dead worker's job for hours).
 */
export class GraphileExecutor implements Executor {
  readonly #options: GraphileExecutorOptions;
  readonly #url: string;
  readonly #schema: string;
  readonly #slots: Slots;
  readonly #localRuns = new Set<Promise<void>>();
  #module: Promise<GraphileWorkerModule> | undefined;
  #utils: Promise<WorkerUtils> | undefined;
  #runner: Promise<Runner> | undefined;
  #closing: Promise<void> | undefined;

  constructor(options: GraphileExecutorOptions) {
    const location = parsePostgresUrl(options.connectionUrl);
    const concurrency = options.concurrency ?? 10;
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new RangeError(`concurrency must be a positive integer, got ${concurrency}`);
    }
    this.#options = { ...options, concurrency };
    this.#slots = new Slots(concurrency);
    this.#url = location.connectUrl;
    this.#schema = `${location.schema}_jobs`;
  }

  get mode(): 'dispatch' | 'work' {
    return this.#options.mode;
  }

  start(run: (taskId: string) => Promise<void>): void {
    if (this.#options.mode !== 'work' || this.#runner !== undefined) return;
    this.#runner = this.#startRunner(run);
    this.#runner.catch((error: unknown) => this.#warn('graphile-worker did not start', error));
  }

  /** Resolves once the worker (in `work` mode) is connected and listening for jobs. */
  async ready(): Promise<void> {
    await this.#runner;
  }

  /** In `work` mode, a free slot for a task this process creates and starts at once. */
  reserve(): Reservation | undefined {
    if (this.#runner === undefined || this.#closing !== undefined) return undefined;
    if (!this.#slots.tryAcquire()) return undefined;
    let used = false;
    return {
      run: (taskId, work) => {
        if (used) throw new Error('a reservation runs once');
        used = true;
        const done = new Promise<void>((resolve) => setImmediate(resolve))
          .then(work)
          .catch((error: unknown) => this.#warn(`running task ${taskId} failed`, error))
          .finally(() => {
            this.#slots.release();
            this.#localRuns.delete(done);
          });
        this.#localRuns.add(done);
      },
      release: () => {
        if (used) return;
        used = true;
        this.#slots.release();
      },
    };
  }

  async dispatch(taskId: string): Promise<void> {
    if (this.#closing !== undefined) return;
    const jobKey = await this.#jobKey(taskId);
    if (jobKey === undefined) return;
    const utils = await this.#getUtils();
    // 'replace': a waiting job of this key is reused; one that is running (perhaps on a dead
    // worker) keeps running and a new job is added beside it.
    await utils.addJob(TASK_IDENTIFIER, { taskId } satisfies JobPayload, {
      jobKey,
      jobKeyMode: 'replace',
      maxAttempts: 1,
    });
  }

  async stop(graceMs: number): Promise<void> {
    this.#closing ??= this.#close();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.#closing,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, graceMs);
      }),
    ]);
    clearTimeout(timer);
  }

  closed(): Promise<void> {
    return this.#closing ?? Promise.resolve();
  }

  async #startRunner(run: (taskId: string) => Promise<void>): Promise<Runner> {
    const graphile = await this.#load();
    return graphile.run({
      connectionString: this.#url,
      schema: this.#schema,
      concurrency: this.#options.concurrency ?? 10,
      noHandleSignals: true,
      logger: this.#graphileLogger(graphile),
      taskList: {
        [TASK_IDENTIFIER]: async (payload) => {
          const { taskId } = payload as JobPayload;
          await this.#slots.acquire();
          try {
            await run(taskId);
          } catch (error) {
            // The task's own state is in the store; a failed job would only linger in the queue.
            this.#warn(`running task ${taskId} failed`, error);
          } finally {
            this.#slots.release();
          }
        },
      },
    });
  }

  async #close(): Promise<void> {
    const runner = await this.#runner?.catch(() => undefined);
    await Promise.allSettled([runner?.stop(), ...this.#localRuns]);
    const utils = await this.#utils?.catch(() => undefined);
    await utils?.release();
  }

  /** `<taskId>.<revision>`: a new job for every change (resumption), one while it waits. */
  async #jobKey(taskId: string): Promise<string | undefined> {
    const store = this.#options.store;
    if (store === undefined) return `${taskId}.any`;
    const task = await store.get(taskId);
    if (task === undefined || task.status !== 'working') return undefined;
    return `${taskId}.${task.revision}`;
  }

  #load(): Promise<GraphileWorkerModule> {
    this.#module ??= loadGraphileWorker();
    return this.#module;
  }

  #getUtils(): Promise<WorkerUtils> {
    this.#utils ??= this.#load().then(async (graphile) => {
      const utils = await graphile.makeWorkerUtils({
        connectionString: this.#url,
        schema: this.#schema,
        logger: this.#graphileLogger(graphile),
      });
      await utils.migrate();
      return utils;
    });
    this.#utils.catch(() => (this.#utils = undefined));
    return this.#utils;
  }

  /** graphile-worker's warnings and errors go to taskrail's logger; its chatter does not. */
  #graphileLogger(graphile: GraphileWorkerModule): InstanceType<GraphileWorkerModule['Logger']> {
    return new graphile.Logger(() => (level, message) => {
      if (level === 'error' || level === 'warning') this.#warn('graphile-worker', message);
    });
  }

  #warn(message: string, error: unknown): void {
    const detail = error instanceof Error ? error.message : String(error);
    if (this.#options.logger !== undefined) this.#options.logger.warn(message, { error: detail });
    else process.emitWarning(`taskrail: ${message}: ${detail}`);
  }
}

export function createGraphileExecutor(options: GraphileExecutorOptions): GraphileExecutor {
  return new GraphileExecutor(options);
}
