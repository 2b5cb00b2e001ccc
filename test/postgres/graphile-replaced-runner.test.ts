import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { GraphileExecutor } from '../../src/executors/graphile-worker/index.js';
import type { TaskStore } from '../../src/store/port.js';
import { openPostgresStore } from '../../src/stores/postgres/index.js';
import { waitFor } from '../helpers/wait.js';
import { createRunnable, migrateAnotherSchema, workingExecutor } from './fixtures/graphile.js';
import { dropSchema, skipWithoutPostgres, uniqueSchema, urlWithSchema } from './postgres-env.js';

/**
 * graphile-worker stops every runner of a database when any schema of it is migrated, and the
 * executor starts a new runner while the old one's jobs still run. CI saw the new runner's
 * workers fetch jobs at once and queue them for the busy slots, ahead of another principal's
 * task created a moment later (8 of alice's runs before bob's). Runs here are held by the test.
 */
if (!skipWithoutPostgres('graphile-worker runner replaced while its jobs run')) {
  describe('graphile-worker runner replaced while its jobs hold every slot', () => {
    const schema = uniqueSchema();
    const url = urlWithSchema(schema);
    const otherJobsSchema = `${uniqueSchema()}_jobs`;
    const started: string[] = [];
    const finishers = new Map<string, () => void>();
    const warnings: string[] = [];
    const exitCodeBefore = process.exitCode;
    /** Set at the end: runs still to come (after a failure) return at once. */
    let ending = false;
    let store: TaskStore;
    let executor: GraphileExecutor;

    before(async () => {
      store = await openPostgresStore(url);
      executor = workingExecutor(url, store, warnings, 2);
      executor.start(async (taskId) => {
        started.push(taskId);
        if (ending) return;
        await new Promise<void>((resolve) => finishers.set(taskId, resolve));
      });
      await executor.ready();
    });

    after(async () => {
      ending = true;
      for (const finish of finishers.values()) finish();
      await executor.stop(5000);
      await store.close();
      await dropSchema(schema);
      await dropSchema(otherJobsSchema);
      process.exitCode = exitCodeBefore;
    });

    const createTask = (principal: string) => createRunnable(store, principal);
    const finish = (taskId: string) => {
      const end = finishers.get(taskId);
      assert.ok(end !== undefined, `task ${taskId} is running`);
      end();
    };

    it("takes a job only when a slot is free: a task created meanwhile is not queued behind the new runner's fetches", async () => {
      const [first, second] = [await createTask('alice'), await createTask('alice')];
      await waitFor('both slots to be taken', () => started.length === 2);
      const waiting = [await createTask('alice'), await createTask('alice')];
      await migrateAnotherSchema(otherJobsSchema);
      await waitFor('the runner to be replaced', () =>
        warnings.some((line) => line.includes('starting it again')),
      );
      await executor.ready(); // the new runner's workers have begun their first fetch
      const bob = await createTask('bob');
      finish(first);
      await waitFor('a third run to start', () => started.length === 3);
      assert.equal(started[2], bob, `bob's task runs in the first free slot: ${started.join(' ')}`);
      finish(second);
      finish(bob);
      await waitFor("alice's waiting tasks to run", () =>
        waiting.every((id) => started.includes(id)),
      );
      assert.equal(started.length, 5, 'each task ran once');
    });
  });
}
