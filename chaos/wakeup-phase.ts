/**
 * The wake-up phases of `npm run chaos` (`wakeups-sqlite`, `wakeups-redis` with
 * TASKRAIL_REDIS_URL, `wakeups-postgres` with TASKRAIL_POSTGRES_URL): durable sleeps cancelled
 * mid-sleep, sleeps that outlive their ttl and are swept, `retry: false` naps and tasks
 * cancelled in a backoff wait (chaos/wakeup-expect.ts), while the chaos loop SIGKILLs and
 * SIGTERMs servers and workers. Once the clients are done a fresh process sweeps what expired,
 * and the phase counts the wake-up jobs left in the queue (BullMQ's delayed jobs, graphile's
 * jobs not yet due): every one of them belongs to a task that ended or is gone, so 0 is right.
 * SQLite keeps no jobs (an in-process alarm), so there only the sweep and the ends are judged.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import pg from 'pg';
import { openStore } from '../src/stores/open.js';
import { deleteRedisKeys } from '../test/helpers/redis-keys.js';
import { allTasks, type Counts } from './check.js';
import type { ChaosKit } from './postgres-phase.js';
import { serve, worker, type Proc } from './procs.js';
import { wakeupPlan } from './wakeup-expect.js';

const SIZE = { clients: 3, perClient: 30, firstN: 300_001, plan: wakeupPlan, chaosShare: 0.5 };
const SWEPT_WITHIN_MS = 30_000;

export async function wakeupPhases<R extends Counts>(kit: ChaosKit<R>): Promise<R[]> {
  const results: R[] = [];
  if (kit.wanted('wakeups-sqlite')) results.push(await sqliteWakeups(kit));
  const redis = kit.wanted('wakeups-redis') ? await redisWakeups(kit) : undefined;
  if (redis !== undefined) results.push(redis);
  const postgres = kit.wanted('wakeups-postgres') ? await postgresWakeups(kit) : undefined;
  if (postgres !== undefined) results.push(postgres);
  return results;
}

function deployment<R extends Counts>(kit: ChaosKit<R>) {
  return async (store: string) => [
    ...(await kit.servers(1, ['--no-worker'])(store)),
    ...(await kit.workers(store, 2)),
  ];
}

/**
 * A fresh process sweeps at start: the fades expired asleep go, with their wake-up jobs. Then
 * the jobs left are counted. Returns them.
 */
function settle(
  kit: { log(line: string): void },
  start: (store: string) => Promise<Proc>,
  jobsLeft: () => Promise<number>,
) {
  return async (store: string): Promise<number> => {
    const proc = await start(store);
    const observer = await openStore(store);
    try {
      const deadline = Date.now() + SWEPT_WITHIN_MS;
      let fades = Infinity;
      while (fades > 0 && Date.now() < deadline) {
        fades = (await allTasks(observer)).filter((task) => task.tool === 'w_fade').length;
        if (fades > 0) await new Promise((resolve) => setTimeout(resolve, 500));
      }
      const left = await jobsLeft();
      kit.log(`wake-ups: ${fades} expired sleepers not swept, ${left} wake-up jobs left`);
      return left;
    } finally {
      await observer.close();
      await proc.kill('SIGTERM');
    }
  };
}

async function sqliteWakeups<R extends Counts>(kit: ChaosKit<R>): Promise<R> {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-chaos-wakeups-'));
  const file = join(dir, 'tasks.db');
  try {
    return await kit.phase({
      ...SIZE,
      name: 'wakeups-sqlite',
      store: `sqlite:${file}`,
      victims: kit.servers(1, []),
      faults: [],
      settle: settle(
        kit,
        async (store) => (await serve(store)).proc,
        async () => 0,
      ),
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function redisWakeups<R extends Counts>(kit: ChaosKit<R>): Promise<R | undefined> {
  const shared = process.env['TASKRAIL_REDIS_URL'];
  if (shared === undefined || shared === '') {
    kit.log('wakeups-redis phase skipped: TASKRAIL_REDIS_URL is not set');
    return undefined;
  }
  const url = new URL(shared);
  const prefix = `chaos-wakeups-${randomBytes(4).toString('hex')}`;
  url.searchParams.set('prefix', prefix);
  const queue = new Queue('tasks', { connection: { url: shared }, prefix: `${prefix}:{bull}` });
  try {
    return await kit.phase({
      ...SIZE,
      name: 'wakeups-redis',
      store: url.toString(),
      victims: deployment(kit),
      faults: [],
      settle: settle(
        kit,
        (store) => worker(store),
        () => queue.getDelayedCount(),
      ),
    });
  } finally {
    await queue.close();
    await deleteRedisKeys(url.toString(), prefix);
  }
}

async function postgresWakeups<R extends Counts>(kit: ChaosKit<R>): Promise<R | undefined> {
  const base = process.env['TASKRAIL_POSTGRES_URL'];
  if (base === undefined || base === '') {
    kit.log('wakeups-postgres phase skipped: TASKRAIL_POSTGRES_URL is not set');
    return undefined;
  }
  const url = new URL(base);
  const schema = `chaos_wakeups_${randomBytes(4).toString('hex')}`;
  url.searchParams.set('schema', schema);
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  // Jobs nobody holds that are not due yet: wake-ups (a due one is about to run).
  const jobsLeft = async () => {
    const { rows } = await client.query<{ n: string }>(
      `SELECT count(*) AS n FROM "${schema}_jobs"._private_jobs
        WHERE locked_at IS NULL AND run_at > now()`,
    );
    return Number(rows[0]?.n ?? 0);
  };
  try {
    return await kit.phase({
      ...SIZE,
      name: 'wakeups-postgres',
      store: url.toString(),
      victims: deployment(kit),
      faults: [],
      settle: settle(kit, (store) => worker(store), jobsLeft),
    });
  } finally {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}", "${schema}_jobs" CASCADE`);
    await client.end();
  }
}
