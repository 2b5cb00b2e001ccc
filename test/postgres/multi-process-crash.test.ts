import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createTask, reach } from '../helpers/deployment.js';
import { waitFor } from '../helpers/wait.js';
import { pgDeployment } from './multi-process-setup.js';
import { skipWithoutPostgres } from './postgres-env.js';

/**
 * A `taskrail worker` SIGKILLed mid-task on a Postgres deployment (two `serve --no-worker`
 * replicas, two workers): the survivor takes the task over at its next recovery scan.
 */
if (!skipWithoutPostgres('multi-process postgres deployment: killed workers')) {
  describe('multi-process postgres deployment: killed workers', () => {
    const d = pgDeployment();

    it('finishes the task of a SIGKILLed worker on the other worker, without repeating steps', async () => {
      const taskId = await createTask(d.replicaA(), 'durable_job', { seconds: 3 });
      const running = await d.find('running-attempt-1', taskId);
      const killedAt = Date.now();
      await d.killWorkerRunning(running.pid);
      await d.explained(reach(d.replicaB(), taskId, 'completed', 90_000), taskId);
      process.stdout.write(`# recovered and completed ${Date.now() - killedAt} ms after SIGKILL\n`);
      const mine = d.events().filter((e) => e.taskId === taskId);
      const survivor = d.workers()[0]?.process.pid;
      const pidsOf = (event: string) => mine.filter((e) => e.event === event).map((e) => e.pid);
      assert.deepEqual(pidsOf('first-step'), [running.pid], 'the finished first step ran once');
      assert.deepEqual(pidsOf('running-attempt-2'), [survivor]);
      assert.deepEqual(pidsOf('second-step'), [survivor]);
      await waitFor('the terminal event', () => d.terminalWrites.get(taskId) === 1);
    });

    it('fails a retry: false task "interrupted" when its worker is SIGKILLed', async () => {
      await d.startWorker();
      const taskId = await createTask(d.replicaB(), 'charge_once', {});
      const charging = await d.find('charging', taskId);
      await d.killWorkerRunning(charging.pid);
      await d.explained(reach(d.replicaA(), taskId, 'failed', 90_000), taskId);
      const task = await d.observer().get(taskId);
      assert.match(JSON.stringify(task?.error ?? task?.statusMessage), /interrupted/i);
      const charges = d.events().filter((e) => e.event === 'charging' && e.taskId === taskId);
      assert.equal(charges.length, 1);
    });
  });
}
