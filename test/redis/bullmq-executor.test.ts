import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createBullmqExecutor, type BullmqExecutor } from '../../src/executors/bullmq/index.js';
import { TaskRuntime } from '../../src/runtime/runtime.js';
import type { TaskStore } from '../../src/store/port.js';
import { openRedisStore } from '../../src/stores/redis/index.js';
import type { TaskRecord } from '../../src/task/record.js';
import type { TaskStatus } from '../../src/task/status.js';
import { waitFor } from '../helpers/wait.js';
import { abortable, TestTools, text } from '../runtime/tools.js';
import { Queue } from 'bullmq';
import {
  deletePrefix,
  REDIS_URL,
  skipWithoutRedis,
  uniquePrefix,
  urlWithPrefix,
} from './redis-env.js';

const silent = { info() {}, warn() {}, error() {} };

/**
 * Two "processes" in one: a serve replica (dispatch-only BullMQ executor) and a worker (work
 * mode), each with its own store connection, so everything between them goes through Redis.
 */
if (!skipWithoutRedis('BullMQ executor with the runtime')) {
  describe('BullMQ executor with the runtime', () => {
    const prefix = uniquePrefix();
    const url = urlWithPrefix(prefix);
    const prepared: string[] = [];
    const aborted = new Map<string, number>();
    const tools = new TestTools()
      .add('hello', (args) => text(`hello ${String(args.name)}`))
      .add('ask', async (_args, ctx) => {
        await ctx.step('prepare', () => prepared.push(ctx.taskId ?? '?'));
        const answer = await ctx.elicit('name', {
          message: 'Your name?',
          requestedSchema: { type: 'object', properties: { name: { type: 'string' } } },
        });
        return text(`hi ${String(answer.content?.name)}`);
      })
      .add('wait', async (_args, ctx) => {
        ctx.signal.addEventListener('abort', () => aborted.set(ctx.taskId ?? '?', Date.now()));
        return abortable(ctx.signal);
      });
    const stores: TaskStore[] = [];
    let serve: TaskRuntime;
    let worker: TaskRuntime;
    let workerExecutor: BullmqExecutor;

    before(async () => {
      const serveStore = await openRedisStore(url);
      const workerStore = await openRedisStore(url);
      stores.push(serveStore, workerStore);
      serve = new TaskRuntime({
        store: serveStore,
        tools,
        logger: silent,
        executor: createBullmqExecutor({ connectionUrl: url, mode: 'dispatch', store: serveStore }),
      });
      workerExecutor = createBullmqExecutor({
        connectionUrl: url,
        mode: 'work',
        concurrency: 1,
        store: workerStore,
      });
      worker = new TaskRuntime({
        store: workerStore,
        tools,
        logger: silent,
        executor: workerExecutor,
      });
      worker.start();
      await workerExecutor.ready();
    });

    after(async () => {
      await serve.stop(1000);
      await worker.stop(1000);
      await workerExecutor.closed();
      for (const store of stores) await store.close();
      await deletePrefix(prefix);
    });

    const reach = (task: TaskRecord, status: TaskStatus) =>
      waitFor(`task ${task.id} to be ${status}`, async () => {
        const current = await serve.getTask(task.id, 'alice');
        return current?.status === status ? current : undefined;
      });

    it('runs a task created on a dispatch-only replica on the worker', async () => {
      const task = await serve.createTask({
        tool: 'hello',
        arguments: { name: 'Ada' },
        principal: 'alice',
      });
      const done = await reach(task, 'completed');
      assert.deepEqual(done.result, text('hello Ada'));
    });

    it('frees the worker while a task waits for input, and resumes it on the answer', async () => {
      const parked = await serve.createTask({ tool: 'ask', arguments: {}, principal: 'alice' });
      await reach(parked, 'input_required');
      // Concurrency is 1: this only completes if the parked task gave its slot back.
      const other = await serve.createTask({
        tool: 'hello',
        arguments: { name: 'Bo' },
        principal: 'alice',
      });
      await reach(other, 'completed');
      await serve.answerInput(parked.id, 'alice', {
        name: { action: 'accept', content: { name: 'Cy' } },
      });
      const done = await reach(parked, 'completed');
      assert.deepEqual(done.result, text('hi Cy'));
      assert.deepEqual(
        prepared.filter((id) => id === parked.id),
        [parked.id],
        'the finished step was not repeated',
      );
    });

    it('starts a task its worker replica created there, sharing the one slot with the queue', async () => {
      const held = await worker.createTask({ tool: 'wait', arguments: {}, principal: 'alice' });
      await waitFor('the local run to start', () => tools.calls.get('wait') === 1);
      assert.deepEqual(await worker.store.findRunnable(10), [], 'leased in the creating write');
      const helloCalls = tools.calls.get('hello') ?? 0;
      const queued = await serve.createTask({ tool: 'hello', arguments: {}, principal: 'alice' });
      const queue = new Queue('tasks', {
        connection: { url: REDIS_URL },
        prefix: `${prefix}:{bull}`,
      });
      try {
        // The job is deduplicated by task and revision (BullMQ's deduplication key).
        const jobId = await waitFor('the queued job', () =>
          queue.getDeduplicationJobId(`${queued.id}.${queued.revision}`),
        );
        await waitFor('the queued job to be taken', async () => {
          return (await queue.getJobState(jobId)) === 'active';
        });
        assert.equal(tools.calls.get('hello') ?? 0, helloCalls, 'it waits for the slot');
        await worker.cancelTask(held.id, 'alice');
        await reach(queued, 'completed');
      } finally {
        await queue.close();
      }
    });

    it('stops the handler on the worker when another replica cancels', async () => {
      const task = await serve.createTask({ tool: 'wait', arguments: {}, principal: 'alice' });
      await waitFor(
        'the handler to start',
        async () =>
          (await worker.store.get(task.id))?.attempt === 1 && tools.calls.get('wait') === 2,
      );
      const cancelledAt = Date.now();
      await serve.cancelTask(task.id, 'alice');
      const stoppedAt = await waitFor('the handler to see the abort', () => aborted.get(task.id));
      const delay = stoppedAt - cancelledAt;
      process.stdout.write(`# cross-process cancellation reached the handler in ${delay} ms\n`);
      assert.ok(delay < 1000, `took ${delay} ms`);
      assert.equal((await serve.getTask(task.id, 'alice'))?.status, 'cancelled');
    });
  });
}
