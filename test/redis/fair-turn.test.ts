/**
 * Fair share's look into a BullMQ queue (fair-turn.ts) on a real Redis: a principal alone in the
 * queue is looked for once per quiet spell, not at every job, and a principal that arrives is
 * still found once the spell is over.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { QUEUE_NAME } from '../../src/executors/bullmq/bullmq-executor.js';
import { standBack, TAG_MARK } from '../../src/executors/bullmq/fair-turn.js';
import type { JobData } from '../../src/executors/bullmq/recovery.js';
import { FairGate, fairTag, QuietLook } from '../../src/executors/shared/fair-gate.js';
import { commandsSentBy } from './monitor.js';
import { deletePrefix, REDIS_URL, skipWithoutRedis, uniquePrefix } from './redis-env.js';

/** The look's script call as MONITOR shows it: two keys, the wait list and the prioritized set. */
const LOOK = /^\S+ \[[^\]]+\] "eval(sha)?" .*"2" "[^"]*:wait" "[^"]*:prioritized"/i;

if (!skipWithoutRedis("fair share's look into a BullMQ queue")) {
  describe("fair share's look into a BullMQ queue (real Redis)", () => {
    const prefix = uniquePrefix();
    const alice = fairTag('alice');
    const bob = fairTag('bob');
    const client = new Redis(REDIS_URL as string, { maxRetriesPerRequest: null });
    const options = { connection: client, prefix: `${prefix}:{bull}` };
    const queue = new Queue<JobData>(QUEUE_NAME, options);
    const worker = new Worker<JobData>(QUEUE_NAME, null, { ...options, autorun: false });
    const add = (taskId: string, tag: string, priority: number) =>
      queue.add('run', { taskId, fair: tag }, { jobId: `${taskId}${TAG_MARK}${tag}`, priority });

    before(async () => {
      for (let i = 1; i <= 3; i += 1) await add(`alice${i}`, alice, i);
    });
    after(async () => {
      await worker.close();
      await queue.close();
      client.disconnect();
      await deletePrefix(prefix);
    });

    it('looks once per quiet spell while alice is alone, and finds bob after it', async () => {
      const token = 'token-1';
      const job = (await worker.getNextJob(token)) as Job<JobData>;
      assert.equal(job.data.taskId, 'alice1');
      const gate = new FairGate(2);
      gate.took(alice); // alice1 holds one of two slots: another would be more than half
      let now = 0;
      const fair = { gate, quiet: new QuietLook(25, () => now) };
      const looksAt = async (ms: number): Promise<{ looks: number; stoodBack: boolean }> => {
        now = ms;
        let stoodBack = false;
        const sent = await commandsSentBy(prefix, async () => {
          stoodBack = await standBack(queue, client, fair, job, token);
        });
        return { looks: sent.filter((line) => LOOK.test(line)).length, stoodBack };
      };

      assert.deepEqual(await looksAt(0), { looks: 1, stoodBack: false }, 'alice alone');
      assert.deepEqual(await looksAt(10), { looks: 0, stoodBack: false }, 'within the spell');
      await add('bob1', bob, 3);
      assert.deepEqual(
        await looksAt(24),
        { looks: 0, stoodBack: false },
        "bob's job, behind alice's by priority, waits for the spell's end",
      );
      assert.deepEqual(await looksAt(25), { looks: 1, stoodBack: true }, 'the spell is over');
      assert.equal(await queue.getJobState(job.id as string), 'prioritized', 'alice1 went back');
      const next = (await worker.getNextJob('token-2')) as Job<JobData>;
      assert.equal(next.data.taskId, 'bob1', "bob's job was moved to the head");
    });
  });
}
