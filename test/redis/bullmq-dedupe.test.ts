import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Queue, Worker } from 'bullmq';
import { createBullmqExecutor, type BullmqExecutor } from '../../src/executors/bullmq/index.js';
import type { TaskStore } from '../../src/store/port.js';
import { openRedisStore } from '../../src/stores/redis/index.js';
import { deletePrefix, skipWithoutRedis, uniquePrefix, urlWithPrefix } from './redis-env.js';
import { handDrivenQueue, storedTask } from './hand-queue.js';

/**
 * The dispatch side of the BullMQ executor against a real queue, with a hand-driven BullMQ
 * worker standing in for the `taskrail worker` processes: which dispatches collapse into one
 * job (BullMQ's deduplication) and which must give the task a job of its own.
 */
if (!skipWithoutRedis('BullMQ dispatch deduplication')) {
  describe('BullMQ dispatch deduplication', () => {
    const prefix = uniquePrefix();
    const url = urlWithPrefix(prefix);
    let store: TaskStore;
    let executor: BullmqExecutor;
    let queue: Queue;
    let taker: Worker;

    before(async () => {
      store = await openRedisStore(url);
      executor = createBullmqExecutor({ connectionUrl: url, mode: 'dispatch', store });
      // No processor: jobs move only when the test takes them (getNextJob) or finishes them.
      ({ queue, taker } = handDrivenQueue(prefix));
    });

    after(async () => {
      await executor.stop(1000);
      await Promise.allSettled([taker.close(), queue.close(), store.close()]);
      await deletePrefix(prefix);
    });

    async function jobsOf(taskId: string): Promise<number> {
      const jobs = await queue.getJobs(['waiting', 'active', 'delayed', 'prioritized']);
      return jobs.filter((job) => job?.data?.taskId === taskId).length;
    }

    it('collapses dispatches of an unchanged task into the job that waits', async () => {
      const task = await storedTask(store);
      await Promise.all([1, 2, 3].map(() => executor.dispatch(task.id)));
      await executor.dispatch(task.id);
      assert.equal(await jobsOf(task.id), 1);
    });

    it('gives a task a new job when its job was taken by a worker that then died', async () => {
      await queue.drain();
      const task = await storedTask(store);
      await executor.dispatch(task.id);
      const taken = await taker.getNextJob('dead-worker-token');
      assert.equal(
        taken?.data.taskId,
        task.id,
        'the job is active under a worker that never ends it',
      );
      await executor.dispatch(task.id);
      const waiting = (await queue.getWaiting()).filter((job) => job.data.taskId === task.id);
      assert.equal(waiting.length, 1, 'recovery dispatch enqueued a job of its own');
    });

    it('gives a task a new job after it parked and was answered (a new revision)', async () => {
      await queue.drain();
      const task = await storedTask(store);
      await executor.dispatch(task.id);
      const parked = await store.compareAndSet(
        { ...task, status: 'input_required', revision: task.revision + 1 },
        task.revision,
      );
      assert.ok(parked.ok);
      const answered = await store.compareAndSet(
        { ...parked.task, status: 'working', revision: parked.task.revision + 1 },
        parked.task.revision,
      );
      assert.ok(answered.ok);
      await executor.dispatch(task.id);
      assert.equal(await jobsOf(task.id), 2, 'the answered revision has its own job');
    });

    it('lets a finished job go: the same revision dispatched again gets a new job', async () => {
      await queue.drain();
      const task = await storedTask(store);
      await executor.dispatch(task.id);
      const job = await taker.getNextJob('live-worker-token');
      assert.ok(job);
      await job.moveToCompleted('done', 'live-worker-token', false);
      assert.equal(await jobsOf(task.id), 0);
      await executor.dispatch(task.id);
      assert.equal(await jobsOf(task.id), 1, 'the deduplication key did not outlive its job');
    });

    it('enqueues nothing for a task that is not working', async () => {
      await queue.drain();
      const task = await storedTask(store);
      const done = await store.compareAndSet(
        { ...task, status: 'completed', revision: task.revision + 1 },
        task.revision,
      );
      assert.ok(done.ok);
      await executor.dispatch(task.id);
      assert.equal(await jobsOf(task.id), 0);
    });
  });
}
