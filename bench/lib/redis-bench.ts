/**
 * What the Redis worker benchmarks (redis-lifecycle, redis-scaling) share: the skip without
 * TASKRAIL_REDIS_URL, a key prefix of their own, a producer that creates and dispatches tasks
 * as a `serve --no-worker` replica does (the runtime's createTask, BullMQ in dispatch mode),
 * a cheap completion counter, and worker child processes.
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createBullmqExecutor, type BullmqExecutor } from '../../src/executors/bullmq/index.js';
import { QUEUE_NAME } from '../../src/executors/bullmq/bullmq-executor.js';
import { stderrLogger } from '../../src/runtime/logger.js';
import { createTaskServer, type TaskServer } from '../../src/server/app.js';
import type { TaskStore } from '../../src/store/port.js';
import { openStore } from '../../src/stores/open.js';
import { deleteRedisKeys } from '../../test/helpers/redis-keys.js';
import { BENCH_TOOLS, MAIN, startServer, type ChildServer } from './http.js';
import registerTools from './tools.js';
import { report } from './stats.js';

export const REDIS_BASE = process.env['TASKRAIL_REDIS_URL'] ?? '';

/** Reports a skipped section (and exits) when TASKRAIL_REDIS_URL is not set. */
export function exitUnlessRedis(title: string): void {
  if (REDIS_BASE !== '') return;
  report({
    title,
    description: 'Skipped: TASKRAIL_REDIS_URL is not set (e.g. redis://127.0.0.1:6379/0).',
    columns: [],
    rows: [],
    goals: [],
  });
  process.exit(0);
}

/** The Redis server's pid (its CPU is part of every task's cost). */
export async function redisPid(): Promise<number> {
  const redis = new Redis(REDIS_BASE);
  try {
    const info = await redis.info('server');
    const pid = /process_id:(\d+)/.exec(info)?.[1];
    if (pid === undefined) throw new Error('INFO server reported no process_id');
    return Number(pid);
  } finally {
    redis.disconnect();
  }
}

export function loadNow(): number {
  return Number((loadavg()[0] ?? 0).toFixed(1));
}

/** A store URL under a fresh prefix, and the plain connection URL. */
export function freshPrefix(): { prefix: string; storeUrl: string } {
  const prefix = `bench-${randomBytes(4).toString('hex')}`;
  const url = new URL(REDIS_BASE);
  url.searchParams.set('prefix', prefix);
  return { prefix, storeUrl: url.toString() };
}

export const dropPrefix = (prefix: string) => deleteRedisKeys(REDIS_BASE, prefix);

/** Runs `count` calls of `send`, `inFlight` at a time. */
export async function inLanes(
  count: number,
  inFlight: number,
  send: (index: number) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < count) await send(next++);
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
}

/**
 * A `serve --no-worker` replica without its HTTP front: the runtime creates each task in the
 * store and dispatches it to BullMQ, as `tools/call` would. The bench tools are registered so
 * the runtime knows them; nothing runs here.
 */
export class Producer {
  private constructor(
    readonly store: TaskStore,
    readonly executor: BullmqExecutor,
    readonly app: TaskServer,
    readonly queue: Queue,
  ) {}

  static async open(storeUrl: string, prefix: string): Promise<Producer> {
    const store = await openStore(storeUrl);
    const executor = createBullmqExecutor({ connectionUrl: storeUrl, mode: 'dispatch', store });
    const logger = stderrLogger('warn');
    const app = createTaskServer({
      store,
      name: 'bench-producer',
      version: '1.0.0',
      logger,
      runtime: { executor, logger },
    });
    registerTools(app);
    const queue = new Queue(QUEUE_NAME, {
      connection: new Redis(REDIS_BASE, { maxRetriesPerRequest: null }),
      prefix: `${prefix}:{bull}`,
    });
    return new Producer(store, executor, app, queue);
  }

  create(tool: string, args: Record<string, unknown>): Promise<unknown> {
    return this.app.runtime.createTask({ tool, arguments: args, principal: 'anonymous' });
  }

  async close(): Promise<void> {
    await this.app.close(1000);
    await this.executor.stop(1000);
    await this.queue.close();
    await this.queue.disconnect();
    await this.store.close();
  }
}

/**
 * Counts completions from the store's change notices (one pub/sub message per write, matched as
 * a string: no decoding, no read-back), so the observer costs next to nothing per task.
 */
export class CompletionCounter {
  #count = 0;
  #waiters: { at: number; resolve: () => void }[] = [];

  private constructor(readonly subscriber: Redis) {}

  static async open(prefix: string): Promise<CompletionCounter> {
    const subscriber = new Redis(REDIS_BASE);
    const counter = new CompletionCounter(subscriber);
    subscriber.on('message', (_channel: string, message: string) => {
      if (message.includes('"k":"w"') && message.includes('"s":"completed"')) counter.#bump();
    });
    await subscriber.subscribe(`${prefix}:events`);
    return counter;
  }

  get count(): number {
    return this.#count;
  }

  /** Resolves once `count` completions were seen in all (or throws after `timeoutMs`). */
  reach(count: number, timeoutMs = 90_000): Promise<void> {
    if (this.#count >= count) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`only ${this.#count}/${count} tasks completed in ${timeoutMs} ms`)),
        timeoutMs,
      );
      this.#waiters.push({
        at: count,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  #bump(): void {
    this.#count += 1;
    if (this.#waiters.length === 0) return;
    const due = this.#waiters.filter((w) => w.at <= this.#count);
    this.#waiters = this.#waiters.filter((w) => w.at > this.#count);
    for (const waiter of due) waiter.resolve();
  }

  close(): void {
    this.subscriber.disconnect();
  }
}

/** A `taskrail worker` on the bench tools. */
export function startTaskrailWorker(storeUrl: string, slots: number): Promise<ChildServer> {
  const args = ['worker', '--concurrency', String(slots), '--tools', BENCH_TOOLS];
  return startServer(MAIN, [...args, '--log-level', 'warn', '--store', storeUrl], {}, /(ready)/);
}

/** Starts `count` worker processes at once; resolves when all are ready. */
export function startWorkers(
  count: number,
  start: () => Promise<ChildServer>,
): Promise<ChildServer[]> {
  return Promise.all(Array.from({ length: count }, start));
}

export const pidsOf = (children: ChildServer[]): number[] =>
  children.map((child) => child.process.pid as number);
