import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RawDispatch } from '../../src/client/rpc-http.js';
import type { TaskStore } from '../../src/store/port.js';
import { openRedisStore } from '../../src/stores/redis/index.js';
import { isTerminal } from '../../src/task/status.js';
import type { Child } from '../helpers/child.js';
import { createTask, deployment, reach, statusOn } from '../helpers/deployment.js';
import { waitFor } from '../helpers/wait.js';
import { deletePrefix, skipWithoutRedis, uniquePrefix, urlWithPrefix } from './redis-env.js';

/**
 * Serve replicas dispatch new and resumed tasks to the workers at once; a replica that does not
 * (executor 'none') leaves them to the workers' recovery scan, which runs every lease period.
 */
const PICKUP_MS = 45_000;
const TOOLS = '.build/test/redis/fixtures/e2e-tools.js';

/**
 * Two `serve --no-worker` replicas and two `taskrail worker`s as real processes on one Redis.
 * The fixture tools append `<event> <taskId> <pid>` lines to a log this test reads.
 */
if (!skipWithoutRedis('multi-process redis deployment')) {
  describe('multi-process redis deployment', () => {
    const prefix = uniquePrefix();
    const url = urlWithPrefix(prefix);
    const dir = mkdtempSync(join(tmpdir(), 'taskrail-e2e-'));
    const processes = deployment({ store: url, tools: TOOLS, logPath: join(dir, 'events.log') });
    let workers: Child[] = [];
    const terminalWrites = new Map<string, number>();
    let observer: TaskStore;
    let replicaA: RawDispatch;
    let replicaB: RawDispatch;

    before(async () => {
      observer = await openRedisStore(url);
      observer.events.on('task:transition', ({ task, to }) => {
        if (isTerminal(to)) terminalWrites.set(task.id, (terminalWrites.get(task.id) ?? 0) + 1);
      });
      [replicaA, replicaB, ...workers] = await Promise.all([
        processes.replica(),
        processes.replica(),
        processes.worker(),
        processes.worker(),
      ]);
    });

    after(async () => {
      await processes.stopAll();
      await observer.close();
      await deletePrefix(prefix);
      rmSync(dir, { recursive: true, force: true });
    });

    const events = () => processes.events();

    it('serves a task created on replica A through replica B: read, answer, cancel', async () => {
      const taskId = await createTask(replicaA, 'ask_then_wait', {});
      await reach(replicaB, taskId, 'input_required', PICKUP_MS);
      const answered = await replicaB({
        method: 'tasks/update',
        params: {
          taskId,
          inputResponses: { name: { action: 'accept', content: { name: 'Ada' } } },
        },
      });
      assert.equal(answered.kind, 'result');
      await waitFor(
        'the worker to resume with the answer',
        () => events().some((e) => e.event === 'answered-Ada' && e.taskId === taskId),
        { timeoutMs: PICKUP_MS },
      );
      assert.equal(await statusOn(replicaB, taskId), 'working');
      const cancelledAt = Date.now();
      assert.equal((await replicaB({ method: 'tasks/cancel', params: { taskId } })).kind, 'result');
      const abort = await waitFor('the handler to be aborted on its worker', () =>
        events().find((e) => e.event.startsWith('aborted-at-') && e.taskId === taskId),
      );
      const delay = Number(abort.event.slice('aborted-at-'.length)) - cancelledAt;
      process.stdout.write(
        `# tasks/cancel on B reached the handler on its worker in ${delay} ms\n`,
      );
      assert.ok(delay < 2000, `cancellation took ${delay} ms`);
      assert.equal(await statusOn(replicaA, taskId), 'cancelled');
      await waitFor('the terminal event', () => terminalWrites.get(taskId) === 1);
    });

    it('finishes the task of a SIGKILLed worker on the other worker, without repeating steps', async () => {
      const taskId = await createTask(replicaA, 'durable_job', { seconds: 3 });
      const running = await waitFor(
        'a worker to start the task',
        () => events().find((e) => e.event === 'running-attempt-1' && e.taskId === taskId),
        { timeoutMs: PICKUP_MS },
      );
      const victim = workers.find((worker) => worker.process.pid === running.pid);
      assert.ok(victim, `worker ${running.pid} runs the task`);
      const killedAt = Date.now();
      await victim.kill('SIGKILL');
      await reach(replicaB, taskId, 'completed', 90_000);
      process.stdout.write(`# recovered and completed ${Date.now() - killedAt} ms after SIGKILL\n`);
      const mine = events().filter((e) => e.taskId === taskId);
      const survivor = workers.find((worker) => worker !== victim)?.process.pid;
      assert.deepEqual(
        mine.filter((e) => e.event === 'first-step').map((e) => e.pid),
        [running.pid],
        'the finished first step ran once',
      );
      assert.deepEqual(
        mine.filter((e) => e.event === 'running-attempt-2').map((e) => e.pid),
        [survivor],
      );
      assert.deepEqual(
        mine.filter((e) => e.event === 'second-step').map((e) => e.pid),
        [survivor],
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(terminalWrites.get(taskId), 1, 'exactly one terminal write');
    });
  });
}
