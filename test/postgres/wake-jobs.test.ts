import { describe } from 'node:test';
import { createGraphileExecutor } from '../../src/executors/graphile-worker/index.js';
import { openPostgresStore } from '../../src/stores/postgres/index.js';
import { registerWakeJobScenarios, type WakeJobEngine } from '../helpers/wake-job-scenarios.js';
import {
  dropSchema,
  skipWithoutPostgres,
  sql,
  uniqueSchema,
  urlWithSchema,
} from './postgres-env.js';

if (!skipWithoutPostgres('wake-up jobs on postgres + graphile-worker')) {
  describe('wake-up jobs on PostgreSQL + graphile-worker: owned by their task, placed fairly', () => {
    const schema = uniqueSchema();
    const url = urlWithSchema(schema);
    const engine: WakeJobEngine = {
      async open(mode, slots) {
        const store = await openPostgresStore(url);
        const executor = createGraphileExecutor({
          connectionUrl: url,
          mode,
          concurrency: slots,
          store,
        });
        return { store, executor };
      },
      async jobs() {
        // Every job row, run or not yet due; a running one is locked (none here once cancelled).
        const rows = await sql<{ n: string }>(
          `SELECT count(*) AS n FROM "${schema}_jobs"._private_jobs WHERE locked_at IS NULL`,
        );
        return Number(rows[0]?.n ?? 0);
      },
      close: () => dropSchema(schema),
    };
    registerWakeJobScenarios(() => engine);
  });
}
