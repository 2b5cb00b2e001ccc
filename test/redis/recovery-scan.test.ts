import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Queue, Worker } from 'bullmq';
import { createBullmqExecutor, type BullmqExecutor } from '../../src/executors/bullmq/index.js';
import { TaskRuntime } from '../../src/runtime/runtime.js';
import type { TaskStore } from '../../src/store/port.js';
import { openRedisStore } from '../../src/stores/redis/index.js';
import type { TaskRecord } from '../../src/task/record.js';
import { waitFor } from '../helpers/wait.js';
import { TestTools, text } from '../runtime/tools.js';
import { deletePrefix, skipWithoutRedis, uniquePrefix, urlWithPrefix } from './redis-env.js';
import { handDrivenQueue, storedTask } from './hand-queue.js';
import { commandsSentBy, watchCommands } from './monitor.js';

const silent = { info() {}, warn() {}, error() {} };

/**
 * The recovery scan against a queue backlog: queued tasks whose jobs wait cost the scan
 * commands per bucket and batch, never per task, and the tasks that do need a job still get one.
 */
if (!skipWithoutRedis('Redis recovery scan')) {
  describe('Redis recovery scan', () => {
    const prefix = uniquePrefix();
    const url = urlWithPrefix(prefix);
    let store: TaskStore;
    let executor: BullmqExecutor;
    let runtime: TaskRuntime;
    let queue: Queue;
    let taker: Worker;

    before(async () => {
      store = await openRedisStore(url);
      executor = createBullmqExecutor({ connectionUrl: url, mode: 'dispatch', store });
      const tools = new TestTools().add('hello', () => text('hi'));
      // The scans are the test's own: the timer's next one is a minute away.
      runtime = new TaskRuntime({ store, tools, logger: silent, executor, leaseMs: 60_000 });
      ({ queue, taker } = handDrivenQueue(prefix));
      const watch = await watchCommands(prefix);
      runtime.start(); // its first scan, in the background: wait for its last command
      await waitFor('the first scan', () => watch.seen.some((line) => line.includes('"leased"')));
      watch.stop();
    });

    after(async () => {
      await runtime.stop(1000);
      await Promise.allSettled([taker.close(), queue.close(), store.close()]);
      await deletePrefix(prefix);
    });

    async function queuedTask(): Promise<TaskRecord> {
      const task = await storedTask(store);
      await executor.dispatch(task.id, 'created');
      return task;
    }

    async function jobsOf(taskId: string): Promise<number> {
      const jobs = await queue.getJobs(['waiting', 'active', 'delayed', 'prioritized']);
      return jobs.filter((job) => job?.data?.taskId === taskId).length;
    }

    async function backlogScanCost(tasks: number): Promise<number> {
      await Promise.all(Array.from({ length: tasks }, () => queuedTask()));
      const sent = await commandsSentBy(prefix, () => runtime.recoverNow());
      assert.equal((await queue.getWaitingCount()) >= tasks, true, 'the jobs still wait');
      return sent.length;
    }

    it('scans a backlog of queued tasks in the same few commands, whatever its length', async () => {
      await queuedTask();
      await runtime.recoverNow(); // connections open and scripts load on first use
      const small = await backlogScanCost(19);
      const large = await backlogScanCost(200);
      assert.equal(large, small, `commands for 20 queued tasks: ${small}, for 220: ${large}`);
      assert.ok(large <= 8, `a scan of 220 queued tasks sent ${large} commands`);
      assert.equal(await queue.getWaitingCount(), 220, 'no job added for a task whose job waits');
    });

    it('gives a job to the tasks whose job is gone or was taken by a dead worker', async () => {
      await queue.drain();
      const taken = await queuedTask();
      const job = await taker.getNextJob('dead-worker-token');
      assert.equal(job?.data.taskId, taken.id, 'the job is active under a worker that died');
      const waiting = await queuedTask();
      const lost = await queuedTask();
      const lostJob = (await queue.getWaiting()).find((job) => job.data.taskId === lost.id);
      await lostJob?.remove();
      await waitFor('the lost job gone', async () => (await jobsOf(lost.id)) === 0);
      await runtime.recoverNow();
      assert.equal(await jobsOf(waiting.id), 1, 'a waiting job is enough');
      assert.equal(await jobsOf(lost.id), 1, 'a task whose job is gone gets one');
      const again = (await queue.getWaiting()).filter((next) => next.data.taskId === taken.id);
      assert.equal(again.length, 1, 'a task whose job a dead worker holds gets a waiting job');
    });
  });
}
