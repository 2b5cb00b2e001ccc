import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createGraphileExecutor } from '../../src/executors/graphile-worker/index.js';
import { TaskRuntime } from '../../src/runtime/runtime.js';
import { openPostgresStore } from '../../src/stores/postgres/index.js';
import type { TaskStore } from '../../src/store/port.js';
import { TestTools, text } from '../runtime/tools.js';
import { waitFor } from '../helpers/wait.js';
import { dropSchema, skipWithoutPostgres, uniqueSchema, urlWithSchema } from './postgres-env.js';

const silent = { info() {}, warn() {}, error() {} };
/**
 * How late a wake-up may come: a claim and a run on a loaded test machine. graphile-worker's own
 * poll is 60 s and the recovery scan 15 s, so a wake-up that waited for either fails.
 */
const LATE_MS = 1500;

interface Worker {
  name: string;
  runtime: TaskRuntime;
  store: TaskStore;
}

/** When each task's nap began and ended, and which worker woke it. */
const started = new Map<string, number>();
const woke = new Map<string, { at: number; by: string }>();

function napTools(name: string): TestTools {
  return new TestTools().add('nap', async (args, ctx) => {
    const id = ctx.taskId ?? '';
    if (!started.has(id)) started.set(id, Date.now());
    await ctx.sleep(Number(args['ms']));
    woke.set(id, { at: Date.now(), by: name });
    return text('rested');
  });
}

/**
 * A task's durable sleep on PostgreSQL + graphile-worker ends on time in whichever worker is
 * there: graphile-worker's workers do not poll at rest, so its future-dated job is fetched by
 * a timer armed from the trigger's notice (or, for a worker started later, from the queue).
 */
if (!skipWithoutPostgres('wake-ups on time on postgres + graphile-worker')) {
  describe('PostgreSQL + graphile-worker: a sleeping task wakes on time', () => {
    const schema = uniqueSchema();
    const url = urlWithSchema(schema);
    const workers: Worker[] = [];

    const startWorker = async (name: string): Promise<Worker> => {
      const store = await openPostgresStore(url);
      const executor = createGraphileExecutor({
        connectionUrl: url,
        mode: 'work',
        concurrency: 2,
        store,
      });
      const runtime = new TaskRuntime({ tools: napTools(name), logger: silent, store, executor });
      runtime.start();
      await executor.ready();
      const worker = { name, runtime, store };
      workers.push(worker);
      return worker;
    };
    const stopWorker = async (worker: Worker) => {
      workers.splice(workers.indexOf(worker), 1);
      await worker.runtime.stop(5000);
      await worker.store.close();
    };
    const sleeping = (worker: Worker, taskId: string) =>
      waitFor(`task ${taskId} to sleep`, async () =>
        /^sleeping until /.test((await worker.store.get(taskId))?.statusMessage ?? ''),
      );
    const lateness = async (taskId: string, ms: number) => {
      await waitFor(`task ${taskId} to wake`, () => woke.has(taskId), { timeoutMs: 30_000 });
      const late = (woke.get(taskId)?.at ?? 0) - ((started.get(taskId) ?? 0) + ms);
      process.stdout.write(`# woke ${late} ms after its time, by ${woke.get(taskId)?.by}\n`);
      return late;
    };

    after(async () => {
      for (const worker of [...workers]) await stopWorker(worker);
      await dropSchema(schema);
    });

    it('in the worker that set the wait', async () => {
      const a = await startWorker('a');
      const task = await a.runtime.createTask({
        tool: 'nap',
        arguments: { ms: 1000 },
        principal: 'p',
      });
      const late = await lateness(task.id, 1000);
      assert.ok(late >= 0 && late < LATE_MS, `woke ${late} ms late`);
    });

    it('in another worker, when the one that set the wait is gone', async () => {
      const [a] = workers as [Worker];
      await startWorker('b');
      const task = await a.runtime.createTask({
        tool: 'nap',
        arguments: { ms: 3000 },
        principal: 'p',
      });
      await sleeping(a, task.id);
      await stopWorker(a);
      const late = await lateness(task.id, 3000);
      assert.equal(woke.get(task.id)?.by, 'b');
      assert.ok(late >= 0 && late < LATE_MS, `woke ${late} ms late`);
    });

    it('in a worker started after the wait was set', async () => {
      const [b] = workers as [Worker];
      const task = await b.runtime.createTask({
        tool: 'nap',
        arguments: { ms: 4000 },
        principal: 'p',
      });
      await sleeping(b, task.id);
      await stopWorker(b);
      await startWorker('c');
      const late = await lateness(task.id, 4000);
      assert.equal(woke.get(task.id)?.by, 'c');
      assert.ok(late >= 0 && late < LATE_MS, `woke ${late} ms late`);
    });
  });
}
