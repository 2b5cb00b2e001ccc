/** Thin adapters over the two Postgres job engines compared in bench/postgres-engines.ts. */
import { Logger, run, makeWorkerUtils, type Runner, type WorkerUtils } from 'graphile-worker';
import PgBoss from 'pg-boss';

export type EngineName = 'graphile-worker' | 'pg-boss';

export interface EngineUnderTest {
  /** Starts a worker taking jobs, `concurrency` at once. */
  work(handler: (id: string) => Promise<void>, concurrency: number): Promise<void>;
  add(id: string): Promise<void>;
  stop(): Promise<void>;
}

const QUEUE = 'tasks';

export async function openEngine(
  name: EngineName,
  url: string,
  schema: string,
): Promise<EngineUnderTest> {
  return name === 'graphile-worker' ? openGraphile(url, schema) : openPgBoss(url, schema);
}

async function openGraphile(url: string, schema: string): Promise<EngineUnderTest> {
  const utils: WorkerUtils = await makeWorkerUtils({ connectionString: url, schema });
  await utils.migrate();
  const runners: Runner[] = [];
  return {
    async work(handler, concurrency) {
      runners.push(
        await run({
          connectionString: url,
          schema,
          concurrency,
          noHandleSignals: true,
          pollInterval: 2000,
          logger: silentGraphileLogger(),
          taskList: { [QUEUE]: async (payload) => handler((payload as { id: string }).id) },
        }),
      );
    },
    async add(id) {
      await utils.addJob(QUEUE, { id }, { maxAttempts: 1 });
    },
    async stop() {
      await Promise.all(runners.map((runner) => runner.stop()));
      await utils.release();
    },
  };
}

async function openPgBoss(url: string, schema: string): Promise<EngineUnderTest> {
  const bosses: PgBoss[] = [];
  const open = async (): Promise<PgBoss> => {
    const boss = new PgBoss({
      connectionString: url,
      schema,
      supervise: true,
      maintenanceIntervalSeconds: 1,
    });
    boss.on('error', () => undefined);
    await boss.start();
    bosses.push(boss);
    return boss;
  };
  const producer = await open();
  await producer.createQueue(QUEUE, { name: QUEUE, expireInSeconds: 5, retryLimit: 5 });
  return {
    async work(handler, concurrency) {
      const boss = await open();
      for (let i = 0; i < concurrency; i++) {
        await boss.work<{ id: string }>(QUEUE, { pollingIntervalSeconds: 0.5 }, async (jobs) => {
          for (const job of jobs) await handler(job.data.id);
        });
      }
    },
    async add(id) {
      await producer.send(QUEUE, { id });
    },
    async stop() {
      await Promise.all(bosses.map((boss) => boss.stop({ graceful: false, wait: true })));
    },
  };
}

function silentGraphileLogger(): Logger {
  return new Logger(() => () => undefined);
}
