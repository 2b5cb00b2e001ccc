import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RawDispatch } from '../../src/client/rpc-http.js';
import type { TaskStore } from '../../src/store/port.js';
import { openPostgresStore } from '../../src/stores/postgres/index.js';
import { isTerminal } from '../../src/task/status.js';
import type { Child } from '../helpers/child.js';
import { createTask, deployment, reach, statusOn } from '../helpers/deployment.js';
import { waitFor } from '../helpers/wait.js';
import {
  dropSchema,
  skipWithoutPostgres,
  sql,
  uniqueSchema,
  urlWithSchema,
} from './postgres-env.js';

/** A killed worker's task is found once its lease (15 s) expires, by the next recovery scan. */
const PICKUP_MS = 60_000;
const TOOLS = '.build/test/postgres/fixtures/e2e-tools.js';

/**
 * Two `serve --no-worker` replicas and two `taskrail worker`s as real processes on one
 * PostgreSQL schema. The fixture tools append `<event> <taskId> <pid>` lines to a log.
 */
if (!skipWithoutPostgres('multi-process postgres deployment')) {
  describe('multi-process postgres deployment', () => {
    const schema = uniqueSchema();
    const url = urlWithSchema(schema);
    const dir = mkdtempSync(join(tmpdir(), 'taskrail-pg-e2e-'));
    const processes = deployment({ store: url, tools: TOOLS, logPath: join(dir, 'events.log') });
    let workers: Child[] = [];
    const terminalWrites = new Map<string, number>();
    let observer: TaskStore;
    let replicaA: RawDispatch;
    let replicaB: RawDispatch;

    const startWorker = async () => {
      const worker = await processes.worker();
      workers.push(worker);
      return worker;
    };
    const startAll = async () => {
      [replicaA, replicaB] = await Promise.all([processes.replica(), processes.replica()]);
      await Promise.all([startWorker(), startWorker()]);
    };

    before(async () => {
      observer = await openPostgresStore(url);
      observer.events.on('task:transition', ({ task, to }) => {
        if (isTerminal(to)) terminalWrites.set(task.id, (terminalWrites.get(task.id) ?? 0) + 1);
      });
      await startAll();
    });

    after(async () => {
      await processes.stopAll();
      await observer.close();
      await dropSchema(schema);
      rmSync(dir, { recursive: true, force: true });
    });

    const events = () => processes.events();
    const find = (event: string, taskId: string) =>
      waitFor(
        `${event} of task ${taskId}`,
        () => events().find((e) => e.event === event && e.taskId === taskId),
        { timeoutMs: PICKUP_MS },
      );
    const killWorkerRunning = async (pid: number) => {
      const victim = workers.find((worker) => worker.process.pid === pid);
      assert.ok(victim, `worker ${pid} runs the task`);
      await victim.kill('SIGKILL');
      workers = workers.filter((worker) => worker !== victim);
      return victim;
    };

    /** On failure, the task's row, its jobs and the processes' warnings join the error. */
    const explained = async <T>(work: Promise<T>, taskId: string): Promise<T> => {
      try {
        return await work;
      } catch (error) {
        const rows = await sql(
          `SELECT status, revision, lease_owner, lease_expires_at FROM "${schema}".tasks
            WHERE id = $1`,
          [taskId],
        );
        const jobs = await sql(
          `SELECT key, run_at, attempts, locked_at, locked_by FROM "${schema}_jobs"._private_jobs`,
        );
        const stderr = processes.children.map((c) => `${c.process.pid}: ${c.stderr()}`);
        const state = JSON.stringify({ task: rows, jobs, stderr }, null, 1);
        throw new Error(`${(error as Error).message}\n${state}`, { cause: error });
      }
    };

    // In 2 of 3 CI runs this task was never run (at creation, or after its answer): another
    // suite setting up graphile-worker on its own schema had stopped both workers' runners.
    it('serves a task created on replica A through replica B: read, answer, cancel', async () => {
      const taskId = await createTask(replicaA, 'ask_then_wait', {});
      await explained(reach(replicaB, taskId, 'input_required', PICKUP_MS), taskId);
      const answered = await replicaB({
        method: 'tasks/update',
        params: {
          taskId,
          inputResponses: { name: { action: 'accept', content: { name: 'Ada' } } },
        },
      });
      assert.equal(answered.kind, 'result');
      await explained(find('answered-Ada', taskId), taskId);
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
      const running = await find('running-attempt-1', taskId);
      const killedAt = Date.now();
      await killWorkerRunning(running.pid);
      await reach(replicaB, taskId, 'completed', 90_000);
      process.stdout.write(`# recovered and completed ${Date.now() - killedAt} ms after SIGKILL\n`);
      const mine = events().filter((e) => e.taskId === taskId);
      const survivor = workers[0]?.process.pid;
      const pidsOf = (event: string) => mine.filter((e) => e.event === event).map((e) => e.pid);
      assert.deepEqual(pidsOf('first-step'), [running.pid], 'the finished first step ran once');
      assert.deepEqual(pidsOf('running-attempt-2'), [survivor]);
      assert.deepEqual(pidsOf('second-step'), [survivor]);
      await waitFor('the terminal event', () => terminalWrites.get(taskId) === 1);
    });

    it('fails a retry: false task "interrupted" when its worker is SIGKILLed', async () => {
      await startWorker();
      const taskId = await createTask(replicaB, 'charge_once', {});
      const charging = await find('charging', taskId);
      await killWorkerRunning(charging.pid);
      await reach(replicaA, taskId, 'failed', 90_000);
      const task = await observer.get(taskId);
      assert.match(JSON.stringify(task?.error ?? task?.statusMessage), /interrupted/i);
      assert.equal(events().filter((e) => e.event === 'charging' && e.taskId === taskId).length, 1);
    });

    it('keeps every task intact when all processes are killed and restarted', async () => {
      await startWorker();
      const before = await observer.list({ limit: 1000 });
      const taskId = await createTask(replicaA, 'durable_job', { seconds: 2 });
      await find('running-attempt-1', taskId);
      await Promise.all(processes.children.map((child) => child.kill('SIGKILL')));
      workers = [];
      await startAll();
      await reach(replicaB, taskId, 'completed', 90_000);
      for (const task of before.tasks) {
        assert.equal(await statusOn(replicaA, task.id), task.status, `task ${task.id} kept it`);
      }
      const firstSteps = events().filter((e) => e.event === 'first-step' && e.taskId === taskId);
      assert.equal(firstSteps.length, 1, 'the finished first step ran once across the restart');
    });
  });
}
