/**
 * The run-policy phases of `npm run chaos` (`policy-sqlite`, `policy-redis`, `policy-cluster` on
 * a 3-master Redis Cluster it starts, `policy-postgres` with TASKRAIL_POSTGRES_URL): tasks of the policy tools (time-outs, some ignoring their signal;
 * retries with durable backoff after transient errors; a `retry: false` tool that throws or
 * times out; `ctx.sleep`), while the chaos loop SIGKILLs and SIGTERMs servers and workers, so
 * many stops land in a backoff or a sleep. Every task's right end follows from its seeded
 * schedule of failures (chaos/policy-expect.ts); `p_once` must never start twice.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { deleteRedisKeys } from '../test/helpers/redis-keys.js';
import { hasRedisServer } from '../test/helpers/own-redis.js';
import { startCluster } from '../test/helpers/redis-cluster.js';
import type { Counts } from './check.js';
import { startChaosRedis } from './faults.js';
import { describePolicyEnds, policyPlan } from './policy-expect.js';
import type { ChaosKit } from './postgres-phase.js';

/** Smaller than the other phases: the waits, not the volume, are what is tried here. */
const SIZE = {
  clients: 3,
  perClient: 30,
  firstN: 200_001,
  plan: policyPlan,
  chaosShare: 0.5,
  describe: describePolicyEnds,
};

export async function policyPhases<R extends Counts>(kit: ChaosKit<R>): Promise<R[]> {
  const results: R[] = [];
  if (kit.wanted('policy-sqlite')) results.push(await sqlitePolicy(kit));
  if (kit.wanted('policy-redis')) {
    const redis = await redisPolicy(kit);
    if (redis !== undefined) results.push(redis);
  }
  if (kit.wanted('policy-cluster')) {
    const cluster = await clusterPolicy(kit);
    if (cluster !== undefined) results.push(cluster);
  }
  if (kit.wanted('policy-postgres')) {
    const postgres = await postgresPolicy(kit);
    if (postgres !== undefined) results.push(postgres);
  }
  return results;
}

async function sqlitePolicy<R extends Counts>(kit: ChaosKit<R>): Promise<R> {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-chaos-policy-'));
  try {
    return await kit.phase({
      ...SIZE,
      name: 'policy-sqlite',
      store: `sqlite:${join(dir, 'tasks.db')}`,
      victims: kit.servers(1, []),
      faults: [],
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function deployment<R extends Counts>(kit: ChaosKit<R>) {
  return async (store: string) => [
    ...(await kit.servers(1, ['--no-worker'])(store)),
    ...(await kit.workers(store, 2)),
  ];
}

async function redisPolicy<R extends Counts>(kit: ChaosKit<R>): Promise<R | undefined> {
  const own = await startChaosRedis();
  const shared = process.env['TASKRAIL_REDIS_URL'];
  if (typeof own === 'string' && (shared === undefined || shared === '')) {
    kit.log(`policy-redis phase skipped: ${own}, and TASKRAIL_REDIS_URL is not set`);
    return undefined;
  }
  const url = new URL(typeof own === 'string' ? (shared as string) : own.url);
  const prefix = `chaos-policy-${randomBytes(4).toString('hex')}`;
  url.searchParams.set('prefix', prefix);
  const faults =
    typeof own === 'string'
      ? []
      : [
          {
            name: 'redis-server (AOF) restarts mid-backoff, down 1 s',
            run: () => own.restart(1000),
          },
        ];
  try {
    return await kit.phase({
      ...SIZE,
      name: 'policy-redis',
      store: url.toString(),
      victims: deployment(kit),
      faults,
    });
  } finally {
    if (typeof own === 'string') await deleteRedisKeys(url.toString(), prefix);
    else await own.stop();
  }
}

/** The concurrency keys' permits sit in their own slots here, apart from the tasks. */
async function clusterPolicy<R extends Counts>(kit: ChaosKit<R>): Promise<R | undefined> {
  if (!hasRedisServer()) {
    kit.log('policy-cluster phase skipped: redis-server is not installed');
    return undefined;
  }
  const cluster = await startCluster(3, 0);
  try {
    return await kit.phase({
      ...SIZE,
      name: 'policy-cluster',
      store: `${cluster.url}&prefix=chaos-policy-${randomBytes(4).toString('hex')}`,
      victims: deployment(kit),
      faults: [],
    });
  } finally {
    await cluster.stop();
  }
}

async function postgresPolicy<R extends Counts>(kit: ChaosKit<R>): Promise<R | undefined> {
  const base = process.env['TASKRAIL_POSTGRES_URL'];
  if (base === undefined || base === '') {
    kit.log('policy-postgres phase skipped: TASKRAIL_POSTGRES_URL is not set');
    return undefined;
  }
  const url = new URL(base);
  const schema = `chaos_policy_${randomBytes(4).toString('hex')}`;
  url.searchParams.set('schema', schema);
  try {
    return await kit.phase({
      ...SIZE,
      name: 'policy-postgres',
      store: url.toString(),
      victims: deployment(kit),
      faults: [],
    });
  } finally {
    const client = new pg.Client({ connectionString: base });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}", "${schema}_jobs" CASCADE`);
    await client.end();
  }
}
