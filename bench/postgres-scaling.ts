/**
 * Worker scaling on Postgres: tasks of a tool that uses 1 ms of CPU, drained by 1 and then by 2
 * `taskrail worker --concurrency 4` processes. The tasks are written first (their jobs with
 * them), then the workers start; the rate counts completions from the moment the last worker
 * said it was ready until the queue runs low, so start-up and the tail do not count.
 * Rounds alternate 1 and 2 workers. Beside each rate, the CPU each process spent per task
 * (/proc/PID/task/*\/schedstat: the workers, the PostgreSQL backends serving their connections,
 * found by application_name, and this process) and from it the highest ratio the cores allow.
 * Needs TASKRAIL_POSTGRES_URL; fresh schemas, dropped after.
 */
import { randomBytes } from 'node:crypto';
import { cpus } from 'node:os';
import pg from 'pg';
import { CpuMeter, cpuBreakdown, drainCeiling } from './lib/cpu.js';
import { newTaskRecord } from '../src/task/record.js';
import { newTaskId } from '../src/task/ids.js';
import { openPostgresStore } from '../src/stores/postgres/index.js';
import type { TaskStore } from '../src/store/port.js';
import { MAIN, startServer, type ChildServer } from './lib/http.js';
import {
  dropStoreSchema,
  exitUnlessPostgres,
  freshSchema,
  loadNow,
  loadRange,
  PG_BASE,
} from './lib/pg-bench.js';
import { wallNow } from './lib/pg-tools.js';
import { median, report, spread } from './lib/stats.js';

const TITLE = 'Postgres: 2 workers vs 1 on a 1 ms CPU tool';
const TOOLS = '.build/bench/lib/pg-tools.js';
const TASKS = 400;
const ROUNDS = 3;
const CONCURRENCY = 4;

exitUnlessPostgres(TITLE);

async function createAll(store: TaskStore, count: number): Promise<void> {
  let next = 0;
  const lane = async () => {
    for (; next < count; next++) {
      const task = newTaskRecord(
        {
          id: newTaskId(),
          principal: 'anonymous',
          tool: 'cpu_1ms',
          arguments: {},
          ttlMs: 3_600_000,
          pollIntervalMs: 20,
        },
        Date.now(),
      );
      await store.create(task);
    }
  };
  await Promise.all(Array.from({ length: 10 }, lane));
}

interface Drain {
  perSecond: number;
  /** CPU ms per task drained: the workers (summed), their PostgreSQL backends, this process. */
  cpu: Record<string, number>;
}

/** Completions per second while all `workers` were running and the queue was still full. */
async function drainRate(workers: number): Promise<Drain> {
  const { schema, url } = freshSchema();
  const store = await openPostgresStore(url);
  const started: ChildServer[] = [];
  const appName = `trbench-${randomBytes(4).toString('hex')}`;
  try {
    // Jobs need graphile-worker's schema and the enqueue trigger: one worker sets them up.
    const setup = await startWorker(url, appName);
    await setup.stop();
    await createAll(store, TASKS);
    const ready: number[] = [];
    await Promise.all(
      Array.from({ length: workers }, async () => {
        const worker = await startWorker(url, appName);
        started.push(worker);
        ready.push(wallNow());
      }),
    );
    const backends = await backendPids(appName);
    const meter = new CpuMeter({
      workers: started.map((worker) => worker.process.pid as number),
      postgres: backends,
      bench: [process.pid],
    });
    meter.start();
    const done = await waitAllCompleted(store);
    const cpuMs = meter.read();
    // Connections opened during the drain count whole (they began within it).
    const opened = (await backendPids(appName)).filter((pid) => !backends.includes(pid));
    cpuMs['postgres'] = (cpuMs['postgres'] ?? 0) + (new CpuMeter({ opened }).read()['opened'] ?? 0);
    const from = Math.max(...ready);
    const until = done[done.length - 1 - CONCURRENCY * workers] as number;
    const inWindow = done.filter((at) => at > from && at <= until).length;
    if (until <= from || inWindow < TASKS / 4) {
      throw new Error(`the window was too short (${inWindow} completions): raise TASKS`);
    }
    const afterReady = done.filter((at) => at > from).length;
    const cpu = Object.fromEntries(
      Object.entries(cpuMs).map(([name, ms]) => [name, ms / afterReady]),
    );
    return { perSecond: inWindow / ((until - from) / 1000), cpu };
  } finally {
    await Promise.all(started.map((worker) => worker.stop()));
    await store.close();
    await dropStoreSchema(schema);
  }
}

/** The PostgreSQL backends serving connections named `appName` (the workers' pools). */
async function backendPids(appName: string): Promise<number[]> {
  const client = new pg.Client({ connectionString: PG_BASE });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE application_name = $1',
      [appName],
    );
    return rows.map((row) => row.pid);
  } finally {
    await client.end();
  }
}

/** A worker whose PostgreSQL connections carry `appName` (node-postgres reads PGAPPNAME). */
function startWorker(url: string, appName: string): Promise<ChildServer> {
  const args = [
    'worker',
    '--concurrency',
    String(CONCURRENCY),
    '--tools',
    TOOLS,
    '--log-level',
    'warn',
  ];
  return startServer(MAIN, [...args, '--store', url], { PGAPPNAME: appName }, /(ready)/);
}

/** Completion times (the finishing write's `updatedAt`, ms), sorted, once all are done. */
async function waitAllCompleted(store: TaskStore): Promise<number[]> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const page = await store.list({ limit: 1000, statuses: ['completed'] });
    if (page.tasks.length >= TASKS)
      return page.tasks.map((task) => task.updatedAt).sort((a, b) => a - b);
    if (Date.now() > deadline) throw new Error(`only ${page.tasks.length}/${TASKS} completed`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const one: Drain[] = [];
const two: Drain[] = [];
const load: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  for (const workers of round % 2 === 0 ? [1, 2] : [2, 1]) {
    (workers === 1 ? one : two).push(await drainRate(workers));
    load.push(loadNow());
  }
}
const rates = (runs: Drain[]) => runs.map((run) => run.perSecond);
const speedups = rates(one).map((rate, i) => (rates(two)[i] as number) / rate);
const speedup = median(speedups);
const medianCpu = (runs: Drain[]): Record<string, number> =>
  Object.fromEntries(
    Object.keys(runs[0]?.cpu ?? {}).map((name) => [
      name,
      median(runs.map((run) => run.cpu[name] ?? 0)),
    ]),
  );
const cpuCell = (runs: Drain[]) => {
  const cpu = medianCpu(runs);
  return `${cpuBreakdown(cpu)} = ${Object.values(cpu)
    .reduce((a, b) => a + b, 0)
    .toFixed(2)}`;
};
/** Little's law: slots busy ÷ tasks per second = how long each task held its slot. */
const slotMs = (workers: number, runs: Drain[]) =>
  ((workers * CONCURRENCY * 1000) / median(rates(runs))).toFixed(1);
const cores = cpus().length;
/** The highest drain rate the CPU per task of `runs` allows with `workers` on `on` cores. */
const cpuBound = (runs: Drain[], workers: number, on: number) => {
  const cpu = medianCpu(runs);
  return drainCeiling({
    workers,
    cores: on,
    workerMs: cpu['workers'] ?? 0,
    otherMs: (cpu['postgres'] ?? 0) + (cpu['bench'] ?? 0),
  });
};
/** The ratio the CPU per task allows, whatever the load: 2 workers' bound over 1 worker's. */
const ceiling = (on: number) => cpuBound(two, 2, on) / cpuBound(one, 1, on);
report({
  title: TITLE,
  description:
    `${TASKS} tasks of a tool that burns 1 ms of CPU, written first, then drained by 1 or 2 ` +
    `\`taskrail worker --concurrency ${CONCURRENCY}\`; completions per second from the last ` +
    `worker's ready line until ${CONCURRENCY} × workers tasks remain. ${ROUNDS} rounds, order ` +
    `alternating. CPU per task: each process's on-CPU time from the last ready line until all completed (/proc/PID/task/*/schedstat: the workers summed; the PostgreSQL backends of their connections, found by application_name, without the WAL writer; this process, which polls for the end) over the tasks completed meanwhile. ` +
    `The ceiling: with CPU per task w (the workers' summed) and x (PostgreSQL + this process), n workers cannot drain faster than min(cores / (w + x), n / w); the 2-worker bound over the 1-worker bound, each from its own runs' CPU, is the highest ratio the CPU allows, whatever the load: ${ceiling(cores).toFixed(2)}× on these ${cores} cores, ${ceiling(4).toFixed(2)}× with 4. A rate far below its CPU bound is bound by latency or by the cores' other users: the last column (slots ÷ tasks/s) is how long each task held a worker slot (a 1 ms tool), i.e. the round trips, commits and waits around it. ` +
    `${loadRange(load)} (1-minute load average; the machine's cores are shared with other work, and PostgreSQL runs on them too).`,
  columns: [
    'workers',
    'tasks/s (median)',
    'spread',
    'ratio to 1 worker',
    'CPU ms per task (median)',
  ],
  rows: [
    [
      '1 (baseline)',
      Math.round(median(rates(one))),
      spread(rates(one), 0),
      1,
      cpuCell(one),
      slotMs(1, one),
    ],
    [
      '2',
      Math.round(median(rates(two))),
      spread(rates(two), 0),
      `${speedup.toFixed(2)}× (${spread(speedups)})`,
      cpuCell(two),
      slotMs(2, two),
    ],
  ],
  goals: [
    {
      text: `2 workers at least 1.7× 1 worker (${speedup.toFixed(2)}×; the CPU per task caps it at ${ceiling(cores).toFixed(2)}× on ${cores} cores; ${loadRange(load)})`,
      met: speedup >= 1.7,
    },
  ],
});
