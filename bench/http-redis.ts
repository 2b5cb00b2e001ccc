/**
 * Redis over HTTP (needs TASKRAIL_REDIS_URL; otherwise reports why it skipped): a 10 ms tool
 * seen completed, and 2 `taskrail worker`s × 4 slots vs 1 × 8 behind a `serve --no-worker`
 * for an I/O-bound and a CPU-bound tool, in interleaved rounds. Keys under a unique prefix.
 */
import { randomBytes } from 'node:crypto';
import { openStore } from '../src/stores/open.js';
import { deleteRedisKeys } from '../test/helpers/redis-keys.js';
import { clientLatency, e2eGoal, e2eLatency, e2eRow } from './_e2e.js';
import {
  BENCH_TOOLS,
  checked,
  endpoint,
  MAIN,
  modern,
  startServer,
  type ChildServer,
} from './_http.js';
import { median, report, spread, type Section } from './_stats.js';

const base = process.env['TASKRAIL_REDIS_URL'];
const TITLE = 'HTTP on Redis: end to end and worker scaling';
if (base === undefined || base === '') {
  report({
    title: TITLE,
    description: 'Skipped: TASKRAIL_REDIS_URL is not set (e.g. redis://127.0.0.1:6379/0).',
    columns: [],
    rows: [],
    goals: [],
  });
  process.exit(0);
}
const url = new URL(base);
const prefix = `bench-${randomBytes(4).toString('hex')}`;
url.searchParams.set('prefix', prefix);
const store = url.toString();
const quiet = ['--tools', BENCH_TOOLS, '--log-level', 'warn', '--store', store];

// End to end: serve runs the tasks itself.
const served = await startServer(MAIN, ['serve', '--port', '0', ...quiet]);
const e2eEp = endpoint(served.url);
const e2e = await e2eLatency(e2eEp, 100);
const viaClient = await clientLatency(served.url, 100);
e2eEp.close();
await served.stop();

// Scaling with equal total slots: one worker with 8 slots against two with 4 each, on an
// I/O-bound tool (100 ms sleeps) and on a CPU-bound one (1 ms of busy CPU per task).
const SLEEPS = { tool: 'io_wait', tasks: 160, ms: 100 };
const BURNS = { tool: 'cpu_burn', tasks: 1000, ms: 1 };
const replica = await startServer(MAIN, ['serve', '--port', '0', '--no-worker', ...quiet]);
const observer = await openStore(store);
const startWorker = (slots: number) =>
  startServer(MAIN, ['worker', '--concurrency', String(slots), ...quiet], {}, /(ready)/);

/** Seconds from the first creation until the last of the batch's tasks completed. */
async function batch(job: typeof SLEEPS): Promise<number> {
  let done = 0;
  const finished = new Promise<void>((resolve) => {
    const off = observer.events.on('task:transition', ({ to }) => {
      if (to === 'completed' && ++done === job.tasks) {
        off();
        resolve();
      }
    });
  });
  // Fresh sockets per batch: an idle keep-alive socket may be closed by the server (its 5 s
  // keep-alive timeout) while workers start, and reusing it would fail the create.
  const ep = endpoint(replica.url);
  const started = performance.now();
  const call = modern('tools/call', { name: job.tool, arguments: { ms: job.ms } }, true);
  let next = 0;
  const lane = async () => {
    while (next++ < job.tasks) await checked(ep, call);
  };
  await Promise.all(Array.from({ length: 32 }, lane));
  ep.close();
  await finished;
  return (performance.now() - started) / 1000;
}

/** Runs both jobs on `workers` worker processes of `slots` slots each. */
async function onWorkers(
  workers: number,
  slots: number,
): Promise<{ sleeps: number; burns: number }> {
  const started: ChildServer[] = [];
  for (let i = 0; i < workers; i += 1) started.push(await startWorker(slots));
  const sleeps = await batch(SLEEPS);
  const burns = await batch(BURNS);
  await Promise.all(started.map((w) => w.stop()));
  return { sleeps, burns };
}

await onWorkers(1, 8); // warm-up
const one: { sleeps: number; burns: number }[] = [];
const two: { sleeps: number; burns: number }[] = [];
for (let round = 0; round < 3; round += 1) {
  one.push(await onWorkers(1, 8));
  two.push(await onWorkers(2, 4));
}
await replica.stop();
await observer.close();
await deleteRedisKeys(base as string, prefix);

const speedup = (job: 'sleeps' | 'burns') => one.map((o, i) => o[job] / (two[i] as typeof o)[job]);
const seconds = (runs: { sleeps: number; burns: number }[], job: 'sleeps' | 'burns') => {
  const values = runs.map((r) => r[job]);
  return `${median(values).toFixed(2)} (${spread(values)})`;
};
const sleepUp = speedup('sleeps');
const burnUp = speedup('burns');
const scalingRow = (label: string, job: 'sleeps' | 'burns', ups: number[]) => [
  label,
  `${seconds(two, job)} s with 2 workers × 4 slots`,
  `${seconds(one, job)} s with 1 worker × 8 slots`,
  `${median(ups).toFixed(2)}× (${spread(ups)})`,
];
const section: Section = {
  title: TITLE,
  description:
    "End to end: `taskrail serve` on Redis (BullMQ, worker in the same process), a 10 ms tool, 100 runs, seen completed by a bare loop polling at its 1 ms pollIntervalMs and by taskrail's client (SQLite ledger, outcome pushed over `subscriptions/listen`); baseline: the tool's own time (a bare 10 ms wait between runs). " +
    `Scaling, with equal total slots: one \`serve --no-worker\` replica takes the creates (32 in flight); ${SLEEPS.tasks} tasks sleeping ${SLEEPS.ms} ms, then ${BURNS.tasks} tasks burning ${BURNS.ms} ms of CPU each, timed until the last completed (store events), ` +
    'on 1 `taskrail worker --concurrency 8` and on 2 `--concurrency 4`, 3 interleaved rounds. On a 2-core machine the replica, Redis and the workers share the cores, so the CPU-bound speed-up is capped well below 2×.',
  columns: ['measure', 'value', 'baseline', 'ratio'],
  rows: [
    e2eRow('10 ms tool seen completed by a polling client, ms p50 / p99', e2e),
    e2eRow(
      "10 ms tool seen completed by taskrail's client (ledger, push), ms p50 / p99",
      viaClient,
    ),
    scalingRow(`${SLEEPS.tasks} tasks sleeping ${SLEEPS.ms} ms`, 'sleeps', sleepUp),
    scalingRow(`${BURNS.tasks} tasks burning ${BURNS.ms} ms of CPU`, 'burns', burnUp),
  ],
  goals: [
    e2eGoal(viaClient, 2),
    {
      text: `2 workers × 4 slots ≥ 0.95× 1 worker × 8 slots on sleeps: distribution costs little (${median(sleepUp).toFixed(2)}×; fails below 0.95)`,
      met: median(sleepUp) >= 0.95,
    },
    {
      text: `2 workers ≥ 1.7× one on a tool burning 1 ms of CPU (${median(burnUp).toFixed(2)}×; fails below 1.7)`,
      met: median(burnUp) >= 1.7,
    },
  ],
};
report(section);
process.exit(0);
