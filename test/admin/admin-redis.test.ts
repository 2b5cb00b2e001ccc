import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTaskServer, type TaskServer } from '../../src/server/app.js';
import type { TaskStore } from '../../src/store/port.js';
import { openStore } from '../../src/stores/open.js';
import { deletePrefix, skipWithoutRedis, uniquePrefix, urlWithPrefix } from '../redis/redis-env.js';
import { waitFor } from '../helpers/wait.js';
import { ADMIN, call, followEvents } from './harness.js';

/** Two replicas on one Redis: the dashboard of A shows and cancels what B runs. */
if (!skipWithoutRedis('admin view on redis')) {
  describe('admin view on redis (events from every replica)', () => {
    const prefix = uniquePrefix();
    const stores: TaskStore[] = [];
    let viewer: TaskServer;
    let runner: TaskServer;
    let base: string;
    const aborted = new Set<string>();

    before(async () => {
      for (let i = 0; i < 2; i += 1) stores.push(await openStore(urlWithPrefix(prefix)));
      viewer = createTaskServer({
        store: stores[0] as TaskStore,
        admin: { tokens: { [ADMIN]: 'ops' } },
        runtime: { executor: 'none' },
      });
      runner = createTaskServer({ store: stores[1] as TaskStore, runtime: { leaseMs: 600 } });
      runner.tool('hold', { description: 'runs until cancelled', task: true }, (_args, ctx) => {
        return new Promise((_, reject) =>
          ctx.signal.addEventListener('abort', () => {
            aborted.add(ctx.taskId ?? '');
            reject(ctx.signal.reason);
          }),
        );
      });
      base = `http://127.0.0.1:${(await viewer.listen(0, '127.0.0.1')).port}`;
      await runner.listen(0, '127.0.0.1');
    });
    after(async () => {
      await viewer?.close(500);
      await runner?.close(500);
      for (const store of stores) await store.close();
      await deletePrefix(prefix);
    });

    it('streams, counts and cancels a task another replica runs', async () => {
      const events = await followEvents(base, ADMIN);
      try {
        const task = await runner.runtime.createTask({
          tool: 'hold',
          arguments: {},
          principal: 'p',
        });
        await waitFor('the row from the other replica', () =>
          events.frames.find((f) => f.event === 'task' && f.data.id === task.id),
        );
        const metrics = await call(base, '/metrics', ADMIN);
        assert.match(metrics.body as string, /taskrail_tasks_created_total\{tool="hold"\} 1/);
        const cancel = await call(base, `/dashboard/api/tasks/${task.id}/cancel`, ADMIN, {
          method: 'POST',
        });
        assert.equal(cancel.status, 200);
        await waitFor('the runner to stop the handler', () => aborted.has(task.id));
      } finally {
        await events.close();
      }
    });
  });
}
