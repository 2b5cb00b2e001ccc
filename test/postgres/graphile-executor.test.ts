import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { GraphileExecutor } from '../../src/executors/graphile-worker/index.js';
import type { TaskStore } from '../../src/store/port.js';
import { openPostgresStore } from '../../src/stores/postgres/index.js';
import { waitFor } from '../helpers/wait.js';
import { createRunnable, migrateAnotherSchema, workingExecutor } from './fixtures/graphile.js';
import { dropSchema, skipWithoutPostgres, uniqueSchema, urlWithSchema } from './postgres-env.js';

/**
 * The graphile-worker executor in `work` mode on a real database, with a `run` that only
 * counts deliveries: what is tested is that every task the store enqueues reaches it.
 */
if (!skipWithoutPostgres('graphile-worker executor')) {
  describe('graphile-worker executor', () => {
    const schema = uniqueSchema();
    const url = urlWithSchema(schema);
    const otherJobsSchema = `${uniqueSchema()}_jobs`;
    const runs = new Map<string, number>();
    const warnings: string[] = [];
    const exitCodeBefore = process.exitCode;
    let store: TaskStore;
    let executor: GraphileExecutor;

    before(async () => {
      store = await openPostgresStore(url);
      executor = workingExecutor(url, store, warnings);
      executor.start(async (taskId) => {
        runs.set(taskId, (runs.get(taskId) ?? 0) + 1);
      });
      await executor.ready();
    });

    after(async () => {
      await executor.stop(5000);
      await store.close();
      await dropSchema(schema);
      await dropSchema(otherJobsSchema);
      process.exitCode = exitCodeBefore;
    });

    const createTask = () => createRunnable(store, 'alice');
    const ranOnce = (taskId: string) =>
      waitFor(`task ${taskId} to be delivered`, () => runs.get(taskId) === 1, {
        timeoutMs: 15_000,
      });

    it('keeps taking jobs after another graphile-worker schema of the database is migrated', async () => {
      await ranOnce(await createTask());
      await migrateAnotherSchema(otherJobsSchema);
      await waitFor('the runner to hear the migration notice', () =>
        warnings.some((line) => line.includes('breaking migration')),
      );
      const afterNotice = await createTask();
      await ranOnce(afterNotice);
      assert.ok(
        warnings.some((line) => line.includes('starting it again')),
        'the replacement is reported',
      );
      // Other suites running at once may announce migrations of their own meanwhile: each sets
      // 57 until its replacement runner has started, so the code is awaited, not read once.
      await waitFor(
        "the exit code to be restored: another schema's migration is no reason to exit 57",
        () => process.exitCode !== 57,
      );
    });
  });
}
