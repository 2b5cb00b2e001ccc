/**
 * Worker scaling on Postgres: tasks of a tool that uses 1 ms of CPU, drained by 1 and then by 2
 * `taskrail worker --concurrency 4` processes. The tasks are written first (their jobs with
 * them), then the workers start; the rate counts completions from the moment the last worker
 * said it was ready until the queue runs low, so start-up and the tail do not count.
 * Rounds alternate 1 and 2 workers. Needs TASKRAIL_POSTGRES_URL; fresh schemas, dropped after.
 */
import { newTaskRecord } from '../src/task/record.js';
import { newTaskId } from '../src/task/ids.js';
import { openPostgresStore } from '../src/stores/postgres/index.js';
import type { TaskStore } from '../src/store/port.js';
import { MAIN, startServer, type ChildServer } from './_http.js';
import {
  dropStoreSchema,
  exitUnlessPostgres,
  freshSchema,
  loadNow,
  loadRange,
} from './_pg-bench.js';
import { wallNow } from './_pg-tools.js';
import { median, report, spread } from './_stats.js';

const TITLE = 'Postgres: 2 workers vs 1 on a 1 ms CPU tool';
const TOOLS = '.build/bench/_pg-tools.js';
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

/** Completions per second while all `workers` were running and the queue was still full. */
async function drainRate(workers: number): Promise<number> {
  const { schema, url } = freshSchema();
  const store = await openPostgresStore(url);
  const started: ChildServer[] = [];
  try {
    // Jobs need graphile-worker's schema and the enqueue trigger: one worker sets them up.
    const setup = await startWorker(url);
    await setup.stop();
    await createAll(store, TASKS);
    const ready: number[] = [];
    await Promise.all(
      Array.from({ length: workers }, async () => {
        const worker = await startWorker(url);
        started.push(worker);
        ready.push(wallNow());
      }),
    );
    const done = await waitAllCompleted(store);
    const from = Math.max(...ready);
    const until = done[done.length - 1 - CONCURRENCY * workers] as number;
    const inWindow = done.filter((at) => at > from && at <= until).length;
    if (until <= from || inWindow < TASKS / 4) {
      throw new Error(`the window was too short (${inWindow} completions): raise TASKS`);
    }
    return inWindow / ((until - from) / 1000);
  } finally {
    await Promise.all(started.map((worker) => worker.stop()));
    await store.close();
    await dropStoreSchema(schema);
  }
}

function startWorker(url: string): Promise<ChildServer> {
  const args = [
    'worker',
    '--concurrency',
    String(CONCURRENCY),
    '--tools',
    TOOLS,
    '--log-level',
    'warn',
  ];
  return startServer(MAIN, [...args, '--store', url], {}, /(ready)/);
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

const one: number[] = [];
const two: number[] = [];
const load: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  for (const workers of round % 2 === 0 ? [1, 2] : [2, 1]) {
    (workers === 1 ? one : two).push(await drainRate(workers));
    load.push(loadNow());
  }
}
const speedups = one.map((rate, i) => (two[i] as number) / rate);
const speedup = median(speedups);
report({
  title: TITLE,
  description:
    `${TASKS} tasks of a tool that burns 1 ms of CPU, written first, then drained by 1 or 2 ` +
    `\`taskrail worker --concurrency ${CONCURRENCY}\`; completions per second from the last ` +
    `worker's ready line until ${CONCURRENCY} × workers tasks remain. ${ROUNDS} rounds, order ` +
    `alternating. ${loadRange(load)} (1-minute load average; the machine has 2 cores shared with ` +
    'other work, and PostgreSQL runs on them too).',
  columns: ['workers', 'tasks/s (median)', 'spread', 'ratio to 1 worker', 'load'],
  rows: [
    ['1 (baseline)', Math.round(median(one)), spread(one, 0), 1, loadRange(load)],
    [
      '2',
      Math.round(median(two)),
      spread(two, 0),
      `${speedup.toFixed(2)}× (${spread(speedups)})`,
      loadRange(load),
    ],
  ],
  goals: [
    {
      text: `2 workers at least 1.7× 1 worker (${speedup.toFixed(2)}×, ${loadRange(load)})`,
      met: speedup >= 1.7,
    },
  ],
});
