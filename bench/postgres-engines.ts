/**
 * Which Postgres job engine should dispatch taskrail's tasks? Measures graphile-worker and
 * pg-boss, each at its best settings, in the same run against the same database:
 * - pickup: time from adding a job to its handler starting (one job at a time, idle worker);
 * - crash: a worker process takes a job and is killed with SIGKILL; how long until another
 *   worker runs that job (capped);
 * - two workers: jobs run, jobs run twice, jobs never run, with two workers sharing the queue.
 * Needs TASKRAIL_POSTGRES_URL. Uses fresh schemas and drops them afterwards.
 * Run: `node .build/bench/postgres-engines.js` (prints one JSON line).
 */
import { startNode } from '../test/helpers/child.js';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { openEngine, type EngineName } from './lib/pg-engines.js';
import { percentile, report } from './lib/stats.js';

const URL_BASE = process.env.TASKRAIL_POSTGRES_URL;
const PICKUPS = 40;
const SHARED_JOBS = 200;
const CRASH_CAP_MS = 30_000;

interface Figures {
  p50: number;
  p95: number;
  recoveryMs: number | undefined;
  ran: number;
  twice: number;
  missing: number;
}

async function pickup(engine: EngineName, url: string, schema: string): Promise<number[]> {
  const queue = await openEngine(engine, url, schema);
  let started: ((at: number) => void) | undefined;
  await queue.work(async () => started?.(performance.now()), 1);
  await sleep(500); // let the worker settle into its idle wait
  const latencies: number[] = [];
  for (let i = 0; i < PICKUPS; i++) {
    const at = new Promise<number>((resolve) => (started = resolve));
    const before = performance.now();
    await queue.add(`p${i}`);
    latencies.push((await at) - before);
  }
  await queue.stop();
  return latencies;
}

async function crashRecovery(
  engine: EngineName,
  url: string,
  schema: string,
): Promise<number | undefined> {
  const queue = await openEngine(engine, url, schema);
  const child = startNode(
    fileURLToPath(import.meta.url),
    ['child', engine, schema],
    {},
    {
      stdin: 'ignore',
    },
  );
  await sleep(1500);
  await queue.add('crash');
  await child.line(/^took$/, CRASH_CAP_MS);
  await child.kill('SIGKILL');
  const killedAt = performance.now();
  const rerun = new Promise<number>((resolve) => {
    void queue.work(async (id) => {
      if (id === 'crash') resolve(performance.now() - killedAt);
    }, 1);
  });
  const result = await Promise.race([rerun, sleep(CRASH_CAP_MS).then(() => undefined)]);
  await queue.stop();
  return result;
}

async function twoWorkers(engine: EngineName, url: string, schema: string) {
  const queue = await openEngine(engine, url, schema);
  const runs = new Map<string, number>();
  const handler = async (id: string): Promise<void> => {
    const until = performance.now() + 1;
    while (performance.now() < until); // 1 ms of CPU
    runs.set(id, (runs.get(id) ?? 0) + 1);
  };
  await queue.work(handler, 5);
  await queue.work(handler, 5);
  for (let i = 0; i < SHARED_JOBS; i++) await queue.add(`s${i}`);
  const deadline = Date.now() + 60_000;
  while (runs.size < SHARED_JOBS && Date.now() < deadline) await sleep(50);
  await sleep(1000); // late duplicates would show up here
  await queue.stop();
  const twice = [...runs.values()].filter((n) => n > 1).length;
  return { ran: runs.size, twice, missing: SHARED_JOBS - runs.size };
}

async function measure(engine: EngineName, url: string): Promise<Figures> {
  const schemas: string[] = [];
  const fresh = (): string => {
    const schema = `bench_${engine.replace('-', '_')}_${randomBytes(3).toString('hex')}`;
    schemas.push(schema);
    return schema;
  };
  try {
    const latencies = await pickup(engine, url, fresh());
    const recoveryMs = await crashRecovery(engine, url, fresh());
    const shared = await twoWorkers(engine, url, fresh());
    return {
      p50: percentile(latencies, 50),
      p95: percentile(latencies, 95),
      recoveryMs,
      ...shared,
    };
  } finally {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  }
}

async function child(engine: EngineName, schema: string, url: string): Promise<void> {
  const queue = await openEngine(engine, url, schema);
  await queue.work(async () => {
    process.stdout.write('took\n');
    await new Promise(() => undefined); // hold the job until killed
  }, 1);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function main(): Promise<void> {
  if (URL_BASE === undefined) {
    throw new Error('set TASKRAIL_POSTGRES_URL (e.g. postgres://postgres@127.0.0.1:5432/test)');
  }
  const [mode, engine, schema] = process.argv.slice(2);
  if (mode === 'child') return child(engine as EngineName, schema as string, URL_BASE);
  const rows: (string | number)[][] = [];
  const figures: Partial<Record<EngineName, Figures>> = {};
  for (const name of ['graphile-worker', 'pg-boss'] as const) {
    const f = await measure(name, URL_BASE);
    figures[name] = f;
    const recovery =
      f.recoveryMs === undefined
        ? `> ${CRASH_CAP_MS / 1000} s`
        : `${(f.recoveryMs / 1000).toFixed(1)} s`;
    rows.push([name, f.p50, f.p95, recovery, `${f.ran}/${SHARED_JOBS}`, f.twice]);
  }
  const graphile = figures['graphile-worker'];
  report({
    title: 'Postgres job engines (how taskrail chose one)',
    description:
      'Pickup: ms from adding a job to its handler starting, idle worker, one job at a time. ' +
      'Crash: a worker process holding a job is killed (SIGKILL); time until another worker runs ' +
      'that job by the engine alone. Two workers: 200 jobs of 1 ms CPU shared by two workers.',
    columns: [
      'engine',
      'pickup p50 ms',
      'pickup p95 ms',
      'crash: job re-run after',
      'two workers: ran',
      'ran twice',
    ],
    rows,
    goals: [
      {
        text: 'the chosen engine (graphile-worker) picks a job up in ≤ 10 ms at p50',
        met: (graphile?.p50 ?? Infinity) <= 10,
      },
      { text: 'two workers never run one job twice', met: (graphile?.twice ?? 1) === 0 },
    ],
  });
}

await main();
if (process.argv[2] !== 'child') process.exit(0);
