import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { TaskRuntime } from '../../src/runtime/runtime.js';
import type { TaskStore } from '../../src/store/port.js';
import { openRedisStore } from '../../src/stores/redis/index.js';
import type { TaskRecord } from '../../src/task/record.js';
import { isTerminal } from '../../src/task/status.js';
import { waitFor } from '../helpers/wait.js';
import { TestTools, text } from '../runtime/tools.js';
import { deletePrefix, skipWithoutRedis, uniquePrefix, urlWithPrefix } from './redis-env.js';

const silent = { info() {}, warn() {}, error() {} };

if (!skipWithoutRedis('clock drift on redis')) {
  describe('workers whose clocks disagree by ±30 s, on one Redis', () => {
    const prefix = uniquePrefix();
    const stores: TaskStore[] = [];
    const runtimes: TaskRuntime[] = [];
    after(async () => {
      for (const runtime of runtimes) await runtime.stop(2000);
      for (const store of stores) await store.close();
      await deletePrefix(prefix);
    });

    it('run every retry:false tool exactly once and steal no live lease', async () => {
      const runs = new Map<string, number>();
      const tools = new TestTools().add(
        'transfer',
        async (_args, ctx) => {
          runs.set(ctx.taskId as string, (runs.get(ctx.taskId as string) ?? 0) + 1);
          await sleep(1500, undefined, { signal: ctx.signal }); // outlives the 900 ms lease
          return text('moved');
        },
        { mode: 'optional', retry: false },
      );
      for (const skewMs of [0, 30_000, -30_000]) {
        const clock = () => Date.now() + skewMs;
        const store = await openRedisStore(urlWithPrefix(prefix), { clock });
        stores.push(store);
        const runtime = new TaskRuntime({ store, tools, clock, logger: silent, leaseMs: 900 });
        runtime.start();
        runtimes.push(runtime);
      }
      const created: TaskRecord[] = [];
      for (let i = 0; i < 15; i += 1) {
        const runtime = runtimes[i % runtimes.length] as TaskRuntime;
        created.push(
          await runtime.createTask({ tool: 'transfer', arguments: { i }, principal: 'alice' }),
        );
      }
      const observer = runtimes[0] as TaskRuntime;
      const settled = await waitFor(
        'every task to end',
        async () => {
          const tasks = await Promise.all(created.map((t) => observer.getTask(t.id, 'alice')));
          return tasks.every((t) => t !== undefined && isTerminal(t.status)) ? tasks : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 100 },
      );
      const wrong = settled.filter((t) => t?.status !== 'completed');
      assert.deepEqual(
        wrong.map((t) => [t?.id, t?.status, t?.error?.message]),
        [],
        'no live lease taken: no retry:false task ended "interrupted"',
      );
      for (const task of created) assert.equal(runs.get(task.id), 1, `task ${task.id} ran once`);
      assert.ok(settled.every((t) => t?.attempt === 1));
    });
  });
}
