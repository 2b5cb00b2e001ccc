/**
 * Wake-up jobs on a job engine (Redis + BullMQ, PostgreSQL + graphile-worker), with two
 * runtimes on their own store connections: a `serve --no-worker`-like replica (dispatch mode)
 * that creates, cancels and sweeps, and a worker (work mode) that runs the tasks. Everything
 * between them goes through the store and the queue. Jobs are counted in the queue itself.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Executor } from '../../src/runtime/api.js';
import { TaskRuntime } from '../../src/runtime/runtime.js';
import type { TaskStore } from '../../src/store/port.js';
import type { TaskRecord } from '../../src/task/record.js';
import { TestTools, text } from '../runtime/tools.js';
import { watchTimers } from './timer-watch.js';
import { waitFor } from './wait.js';

const silent = { info() {}, warn() {}, error() {} };
const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;
/** How long the process is watched once a long sleep is set, and the timers it may arm then. */
const WATCH_MS = 1500;
const ARMS_BOUND = 100;
const SLOTS = 4;

export interface WakeJobEngine {
  /** A store connection and an executor of the engine on it, in `mode`. */
  open(mode: 'dispatch' | 'work', slots: number): Promise<{ store: TaskStore; executor: Executor }>;
  /** Jobs in the queue that would run a task (delayed, waiting or prioritized). */
  jobs(): Promise<number>;
  close(): Promise<void>;
}

/** What the worker's handlers saw, in order: `<event> <principal> <taskId>`. */
type Seen = { event: string; principal: string; taskId: string }[];

function wakeTools(seen: Seen): TestTools {
  const note = (event: string, principal: string, taskId: string | undefined) =>
    seen.push({ event, principal, taskId: taskId ?? '?' });
  return new TestTools()
    .add('nap', async (args, ctx) => {
      await ctx.sleep(Number(args['ms']));
      note('woke', String(args['who']), ctx.taskId);
      await new Promise((resolve) => setTimeout(resolve, Number(args['busyMs'] ?? 0)));
      return text('rested');
    })
    .add('quick', (args, ctx) => {
      note('quick', String(args['who']), ctx.taskId);
      return text('done');
    })
    .add(
      'retry_later',
      () => {
        throw new Error('upstream answered 503');
      },
      { mode: 'optional', retry: { maxAttempts: 3, onError: true, backoffMs: HOUR_MS } },
    );
}

export function registerWakeJobScenarios(engine: () => WakeJobEngine): void {
  const seen: Seen = [];
  const tools = wakeTools(seen);
  let serve: TaskRuntime;
  let worker: TaskRuntime;
  const stores: TaskStore[] = [];

  const start = async () => {
    const replica = await engine().open('dispatch', SLOTS);
    const runner = await engine().open('work', SLOTS);
    stores.push(replica.store, runner.store);
    serve = new TaskRuntime({ tools, logger: silent, ...replica });
    worker = new TaskRuntime({ tools, logger: silent, ...runner });
    worker.start();
    await runner.executor.ready?.();
    await replica.executor.ready?.();
  };
  const createMany = (n: number, tool: string, args: object, extra: { ttlMs?: number } = {}) =>
    Promise.all(
      Array.from({ length: n }, () =>
        serve.createTask({ tool, arguments: { ...args }, principal: 'alice', ...extra }),
      ),
    );
  /** Every task waits (its status says so and nobody holds it) and has its job in the queue. */
  const allWaiting = async (tasks: TaskRecord[], message: RegExp) => {
    await waitFor(
      `${tasks.length} tasks to wait (${message})`,
      async () => {
        const leased = new Set(((await serve.store.findLeased(1000)) ?? []).map((l) => l.id));
        for (const task of tasks) {
          const current = await serve.store.get(task.id);
          if (!message.test(current?.statusMessage ?? '') || leased.has(task.id)) return false;
        }
        return (await engine().jobs()) >= tasks.length;
      },
      { timeoutMs: 30_000 },
    );
  };
  const noJobsLeft = () =>
    waitFor('no job left in the queue', async () => (await engine().jobs()) === 0, {
      timeoutMs: 5_000,
    }).catch(async (error: unknown) => {
      assert.fail(`${await engine().jobs()} jobs left in the queue (${String(error)})`);
    });

  it('a sleep of 30 days arms no timer past the longest delay, and its job waits', async () => {
    await start();
    const watch = watchTimers();
    let seen;
    try {
      const [task] = await createMany(1, 'nap', { ms: 30 * DAY_MS, who: 'alice' });
      await allWaiting([task as TaskRecord], /^sleeping until /);
      const before = watch.armed();
      await new Promise((resolve) => setTimeout(resolve, WATCH_MS));
      const inWindow = watch.armed() - before;
      process.stdout.write(`# ${inWindow} timers armed in the ${WATCH_MS} ms after the sleep\n`);
      assert.ok(inWindow < ARMS_BOUND, `${inWindow} timers armed in ${WATCH_MS} ms`);
      await serve.cancelTask((task as TaskRecord).id, 'alice');
    } finally {
      seen = watch.stop();
    }
    assert.equal(seen.overflowing, 0, 'a timer was armed past 2^31−1 ms');
    assert.deepEqual(seen.warnings, [], 'no TimeoutOverflowWarning');
    await noJobsLeft();
  });

  it('cancelled sleeping tasks take their wake-up jobs with them', async () => {
    const tasks = await createMany(12, 'nap', { ms: HOUR_MS, who: 'alice' });
    await allWaiting(tasks, /^sleeping until /);
    for (const task of tasks) await serve.cancelTask(task.id, 'alice');
    await noJobsLeft();
  });

  it('a task cancelled in its backoff wait takes its retry job with it', async () => {
    const tasks = await createMany(4, 'retry_later', {});
    await allWaiting(tasks, /^attempt 2 of 3 at /);
    for (const task of tasks) await serve.cancelTask(task.id, 'alice');
    await noJobsLeft();
  });

  it('sleeping tasks that expire and are swept take their wake-up jobs with them', async () => {
    const tasks = await createMany(8, 'nap', { ms: HOUR_MS, who: 'alice' }, { ttlMs: 3000 });
    await allWaiting(tasks, /^sleeping until /);
    let swept = 0;
    await waitFor('the tasks to expire and be swept', async () => {
      swept += await serve.sweepNow();
      return swept >= tasks.length;
    });
    await noJobsLeft();
  });

  registerFairWakeScenario(() => ({ serve, seen }));

  it('closes', async () => {
    await serve.stop(1000);
    await worker.stop(1000);
    for (const store of stores) await store.close();
    await engine().close();
  });
}

const ALICE_SLEEPERS = 40;
/** Alice's starts between bob's create and his start: the runs in the slots, and a few fetched. */
const AHEAD_BOUND = 2 * SLOTS;

/**
 * Woken jobs keep their principal's fair place: alice's 40 tasks sleep, then wake together; bob
 * creates one task as they do, and it starts within a few of alice's starts (it used to wait
 * behind every woken job: they carried no principal and the top priority).
 */
function registerFairWakeScenario(h: () => { serve: TaskRuntime; seen: Seen }): void {
  it(`a task of another principal starts within ${AHEAD_BOUND} woken runs of alice's`, async () => {
    const { serve, seen } = h();
    const alice = await Promise.all(
      Array.from({ length: ALICE_SLEEPERS }, () =>
        serve.createTask({
          tool: 'nap',
          arguments: { ms: 2000, who: 'alice', busyMs: 100 },
          principal: 'alice',
        }),
      ),
    );
    const woke = () => seen.filter((entry) => entry.event === 'woke').length;
    await waitFor('alice to wake', () => woke() > 0, { timeoutMs: 30_000, intervalMs: 5 });
    const before = woke();
    const bob = await serve.createTask({
      tool: 'quick',
      arguments: { who: 'bob' },
      principal: 'bob',
    });
    await waitFor('bob to start', () => seen.some((entry) => entry.taskId === bob.id), {
      timeoutMs: 60_000,
    });
    const at = seen.findIndex((entry) => entry.taskId === bob.id);
    const ahead = seen.slice(0, at).filter((entry) => entry.event === 'woke').length - before;
    process.stdout.write(`# ${ahead} of alice's woken runs started before bob's task\n`);
    await waitFor(
      'alice to finish',
      async () => {
        for (const task of alice)
          if ((await serve.getTask(task.id, 'alice'))?.status !== 'completed') return false;
        return true;
      },
      { timeoutMs: 60_000 },
    );
    assert.ok(ahead <= AHEAD_BOUND, `${ahead} of alice's woken runs started first`);
  });
}
