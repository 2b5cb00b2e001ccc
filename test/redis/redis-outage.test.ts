import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { TaskRuntime } from '../../src/runtime/runtime.js';
import { openRedisStore } from '../../src/stores/redis/index.js';
import type { TaskRecord } from '../../src/task/record.js';
import { isTerminal } from '../../src/task/status.js';
import { waitFor } from '../helpers/wait.js';
import { TestTools, text } from '../runtime/tools.js';
import { hasRedisServer, startOwnRedis } from '../helpers/own-redis.js';

describe('a Redis restart under a running task', () => {
  it('keeps the runtime alive, finishes the task once, runs new ones, logs once per outage', async (t) => {
    if (!hasRedisServer()) return t.skip('redis-server is not installed');
    // With AOF, as a production one would have: a restart keeps the tasks.
    const redis = await startOwnRedis({ appendonly: true });
    const stray: unknown[] = [];
    const onStray = (reason: unknown) => stray.push(reason);
    process.on('unhandledRejection', onStray);
    const logLines: string[] = [];
    const storeWarnings: string[] = [];
    const logger = {
      info: (m: string) => logLines.push(m),
      warn: (m: string) => logLines.push(m),
      error: (m: string) => logLines.push(m),
    };
    let release = false;
    const tools = new TestTools().add('reporter', async (_args, ctx) => {
      for (let i = 0; !release || i < 5; i += 1) {
        await ctx.progress(`item ${i}`);
        await sleep(50);
      }
      return text('done');
    });
    const url = redis.url;
    const store = await waitFor('our redis-server', () =>
      openRedisStore(url, { onWarning: (m) => storeWarnings.push(m) }).catch(() => undefined),
    );
    const runtime = new TaskRuntime({ store, tools, logger, leaseMs: 5000 });
    try {
      const settle = (task: TaskRecord) =>
        waitFor(
          `task ${task.id} to end`,
          async () => {
            const current = await runtime.getTask(task.id, 'alice').catch(() => undefined);
            return current !== undefined && isTerminal(current.status) ? current : undefined;
          },
          { timeoutMs: 20_000, intervalMs: 50 },
        );
      const first = await runtime.createTask({
        tool: 'reporter',
        arguments: {},
        principal: 'alice',
      });
      await waitFor(
        'progress',
        async () => (await runtime.getTask(first.id, 'alice'))?.statusMessage,
      );

      await redis.stop();
      await waitFor('the runtime to notice', () =>
        logLines.some((line) => line.includes('task store unavailable')),
      );
      await sleep(1000); // an outage long enough for many failed writes
      await redis.start();
      release = true;

      const done = await settle(first);
      assert.equal(done.status, 'completed', JSON.stringify(done.error));
      assert.equal(tools.calls.get('reporter'), 1, 'the running task was not re-run');
      const second = await runtime.createTask({
        tool: 'reporter',
        arguments: {},
        principal: 'alice',
      });
      assert.equal((await settle(second)).status, 'completed', 'new tasks run after the restart');
      await waitFor('the recovery line', () =>
        logLines.some((line) => line.includes('available again')),
      );

      assert.deepEqual(stray, [], 'no unhandled rejection');
      const count = (lines: string[], text: string) => lines.filter((l) => l.includes(text)).length;
      assert.equal(count(logLines, 'task store unavailable'), 1, logLines.join(' | '));
      assert.equal(count(logLines, 'available again'), 1, logLines.join(' | '));
      assert.equal(count(storeWarnings, '(reconnecting)'), 1, storeWarnings.join(' | '));
      assert.equal(count(storeWarnings, 'reconnected'), 1, storeWarnings.join(' | '));
    } finally {
      process.off('unhandledRejection', onStray);
      await runtime.stop(1000);
      await store.close();
      await redis.remove();
    }
  });
});
