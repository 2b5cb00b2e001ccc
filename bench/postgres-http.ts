/**
 * Postgres over HTTP (needs TASKRAIL_POSTGRES_URL; the Redis comparison also TASKRAIL_REDIS_URL):
 * - pickup: a `serve --no-worker` replica and one `taskrail worker`; ms from sending tools/call
 *   until the handler starts on the worker (creation, dispatch through graphile-worker, claim);
 * - a 10 ms tool seen completed by taskrail's client, `serve` on Postgres beside `serve` on Redis;
 * - 2 workers vs 1 on a tool that uses 1 ms of CPU, behind one `serve --no-worker`.
 * Fresh schemas / key prefixes, removed afterwards.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openStore } from '../src/stores/open.js';
import { deleteRedisKeys } from '../test/helpers/redis-keys.js';
import { clientLatency, e2eRow } from './_e2e.js';
import { checked, endpoint, MAIN, modern, startServer, type ChildServer } from './_http.js';
import { wallNow } from './_pg-tools.js';
import { median, percentile, report, spread, type Section } from './_stats.js';

const TITLE = 'HTTP on Postgres: pickup, end to end, worker scaling';
const TOOLS = '.build/bench/_pg-tools.js';
const base = process.env['TASKRAIL_POSTGRES_URL'];
const redisBase = process.env['TASKRAIL_REDIS_URL'];
if (base === undefined || base === '') {
  report({
    title: TITLE,
    description:
      'Skipped: TASKRAIL_POSTGRES_URL is not set (e.g. postgres://postgres@127.0.0.1:5432/test).',
    columns: [],
    rows: [],
    goals: [],
  });
  process.exit(0);
}
const schema = `trbench_${randomBytes(4).toString('hex')}`;
const url = new URL(base);
url.searchParams.set('schema', schema);
const store = url.toString();
const quiet = (storeUrl: string) => ['--tools', TOOLS, '--log-level', 'warn', '--store', storeUrl];
const startWorker = () =>
  startServer(MAIN, ['worker', '--concurrency', '4', ...quiet(store)], {}, /(ready)/);

async function pickup(count: number): Promise<number[]> {
  const replica = await startServer(MAIN, ['serve', '--port', '0', '--no-worker', ...quiet(store)]);
  const worker = await startWorker();
  const ep = endpoint(replica.url);
  const samples: number[] = [];
  try {
    for (let i = 0; i < count + 5; i++) {
      const sent = wallNow();
      const created = await checked(
        ep,
        modern('tools/call', { name: 'started_at', arguments: {} }, true),
      );
      const get = modern('tasks/get', { taskId: String(created['taskId']) }, true);
      let task = await checked(ep, get);
      while (task['status'] === 'working') task = await checked(ep, get);
      const content = (task['result'] as { content: { text: string }[] }).content;
      if (i >= 5) samples.push(Number(content[0]?.text) - sent); // the first runs warm up
    }
  } finally {
    ep.close();
    await worker.stop();
    await replica.stop();
  }
  return samples;
}

async function clientOn(storeUrl: string): Promise<{ taskrail: number[]; bare: number[] }> {
  const served = await startServer(MAIN, ['serve', '--port', '0', ...quiet(storeUrl)]);
  try {
    return await clientLatency(served.url, 60);
  } finally {
    await served.stop();
  }
}

/** Seconds from the first creation until the last of `tasks` 1 ms CPU tasks completed. */
async function scaling(tasks: number): Promise<{ one: number[]; two: number[] }> {
  const replica = await startServer(MAIN, ['serve', '--port', '0', '--no-worker', ...quiet(store)]);
  const ep = endpoint(replica.url);
  const observer = await openStore(store);
  const batch = async (): Promise<number> => {
    let done = 0;
    const finished = new Promise<void>((resolve) => {
      const off = observer.events.on('task:transition', ({ to }) => {
        if (to === 'completed' && ++done === tasks) {
          off();
          resolve();
        }
      });
    });
    const started = performance.now();
    const call = modern('tools/call', { name: 'cpu_1ms', arguments: {} }, true);
    await Promise.all(Array.from({ length: tasks }, () => checked(ep, call)));
    await finished;
    return (performance.now() - started) / 1000;
  };
  const one: number[] = [];
  const two: number[] = [];
  const first: ChildServer = await startWorker();
  await batch(); // warm-up
  for (let round = 0; round < 3; round++) {
    one.push(await batch());
    const second = await startWorker();
    two.push(await batch());
    await second.stop();
  }
  await first.stop();
  ep.close();
  await observer.close();
  await replica.stop();
  return { one, two };
}

/** Dropping may meet a lock of a process still stopping; then wait and try again. */
async function dropSchemas(): Promise<void> {
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}", "${schema}_jobs" CASCADE`);
        return;
      } catch (error) {
        if (attempt >= 5) throw error;
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
  } finally {
    await client.end();
  }
}

const TASKS = 100;
let section: Section;
try {
  const pickups = await pickup(60);
  process.stderr.write(`pickup p50 ${median(pickups).toFixed(2)} ms\n`);
  const onPostgres = await clientOn(store);
  process.stderr.write(`client on postgres p50 ${median(onPostgres.taskrail).toFixed(2)} ms\n`);
  let onRedis: { taskrail: number[]; bare: number[] } | undefined;
  const prefix = `bench-${randomBytes(4).toString('hex')}`;
  if (redisBase !== undefined && redisBase !== '') {
    const redisUrl = new URL(redisBase);
    redisUrl.searchParams.set('prefix', prefix);
    onRedis = await clientOn(redisUrl.toString());
    await deleteRedisKeys(redisBase, prefix);
  }
  process.stderr.write(
    `client on redis p50 ${onRedis ? median(onRedis.taskrail).toFixed(2) : '-'} ms\n`,
  );
  let scaled: { one: number[]; two: number[] } = { one: [NaN], two: [NaN] };
  let scalingError = '';
  try {
    scaled = await scaling(TASKS);
  } catch (error) {
    scalingError = `failed: ${(error as Error).message}`;
  }
  const { one, two } = scaled;
  const speedups = one.map((s, i) => s / (two[i] as number));
  const pickupP50 = median(pickups);
  const pgP50 = median(onPostgres.taskrail);
  const redisP50 = onRedis === undefined ? undefined : median(onRedis.taskrail);
  section = {
    title: TITLE,
    description:
      'Pickup: one `serve --no-worker` and one `taskrail worker` on Postgres; ms from sending ' +
      'tools/call until the handler starts on the worker (wall clocks of the same machine), 60 ' +
      "tasks one at a time. End to end: `taskrail serve` (worker in the same process), a 10 ms tool seen completed by taskrail's " +
      'client (ledger, push), 60 runs, on Postgres and, in the same run, on Redis. Scaling: ' +
      `${TASKS} tasks of a tool using 1 ms of CPU created at once behind one \`serve --no-worker\`, ` +
      'timed until the last completed, with 1 and then 2 `taskrail worker --concurrency 4`, 3 interleaved rounds.',
    columns: ['measure', 'value', 'baseline', 'ratio'],
    rows: [
      [
        'pickup after create, ms p50 / p95',
        `${pickupP50.toFixed(2)} / ${percentile(pickups, 95).toFixed(2)}`,
        'goal ≤ 10 ms p50',
        '',
      ],
      e2eRow(
        "10 ms tool seen completed by taskrail's client on Postgres, ms p50 / p99",
        onPostgres,
      ),
      onRedis === undefined
        ? ['the same on Redis', 'skipped: TASKRAIL_REDIS_URL is not set', '', '']
        : e2eRow("10 ms tool seen completed by taskrail's client on Redis, ms p50 / p99", onRedis),
      [
        'Postgres vs Redis, client p50',
        `${pgP50.toFixed(2)} ms`,
        redisP50 === undefined ? 'n/a' : `${redisP50.toFixed(2)} ms`,
        redisP50 === undefined ? '' : `${(pgP50 / redisP50).toFixed(2)}×`,
      ],
      [
        `${TASKS} tasks of 1 ms CPU, seconds (min–max)`,
        scalingError || `${median(two).toFixed(2)} (${spread(two)}) with 2 workers`,
        `${median(one).toFixed(2)} (${spread(one)}) with 1 worker`,
        `${median(speedups).toFixed(2)}× (${spread(speedups)})`,
      ],
    ],
    goals: [
      {
        text: `pickup after create p50 ≤ 10 ms (${pickupP50.toFixed(2)} ms)`,
        met: pickupP50 <= 10,
      },
      {
        text: "10 ms tool seen completed by taskrail's client within 1.5× the Redis figure",
        met: redisP50 !== undefined && pgP50 <= 1.5 * redisP50,
      },
      { text: '2 workers at least 1.7× 1 worker on a 1 ms CPU tool', met: median(speedups) >= 1.7 },
    ],
  };
} finally {
  await dropSchemas();
}
report(section);
