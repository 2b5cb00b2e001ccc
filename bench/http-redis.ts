/**
 * Redis over HTTP (needs TASKRAIL_REDIS_URL; otherwise reports why it skipped): a 10 ms tool
 * seen completed by a polling client, and 2 `taskrail worker`s vs 1 behind a
 * `serve --no-worker` for an I/O-bound tool, in interleaved rounds. Keys under a unique prefix.
 */
import { randomBytes } from 'node:crypto';
import { openStore } from '../src/stores/open.js';
import { deleteRedisKeys } from '../test/helpers/redis-keys.js';
import { clientLatency, e2eLatency, e2eRow } from './_e2e.js';
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

// Scaling: a dispatch-only replica, and one or two workers (concurrency 4, 100 ms jobs).
const TASKS = 160;
const JOB_MS = 100;
const replica = await startServer(MAIN, ['serve', '--port', '0', '--no-worker', ...quiet]);
const ep = endpoint(replica.url);
const observer = await openStore(store);
const startWorker = () =>
  startServer(MAIN, ['worker', '--concurrency', '4', ...quiet], {}, /(ready)/);

/** Seconds from the first creation until the last of TASKS tasks completed. */
async function batch(): Promise<number> {
  let done = 0;
  const finished = new Promise<void>((resolve) => {
    const off = observer.events.on('task:transition', ({ to }) => {
      if (to === 'completed' && ++done === TASKS) {
        off();
        resolve();
      }
    });
  });
  const started = performance.now();
  const call = modern('tools/call', { name: 'io_wait', arguments: { ms: JOB_MS } }, true);
  await Promise.all(Array.from({ length: TASKS }, () => checked(ep, call)));
  await finished;
  return (performance.now() - started) / 1000;
}

const one: number[] = [];
const two: number[] = [];
const first: ChildServer = await startWorker();
await batch(); // warm-up
for (let round = 0; round < 3; round += 1) {
  one.push(await batch());
  const second = await startWorker();
  two.push(await batch());
  await second.stop();
}
await first.stop();
ep.close();
await replica.stop();
await observer.close();
await deleteRedisKeys(base as string, prefix);

const speedups = one.map((s, i) => s / (two[i] as number));
const speedup = median(speedups);
const e2eP50 = median(e2e.taskrail);
const clientP50 = median(viaClient.taskrail);
const section: Section = {
  title: TITLE,
  description:
    "End to end: `taskrail serve` on Redis (BullMQ, worker in the same process), a 10 ms tool, 100 runs, seen completed by a bare loop polling at its 1 ms pollIntervalMs and by taskrail's client (SQLite ledger, outcome pushed over `subscriptions/listen`). " +
    `Scaling: one \`serve --no-worker\` replica; ${TASKS} tasks of a ${JOB_MS} ms I/O-bound tool created at once, timed until the last completed (store events), ` +
    'with 1 and then 2 `taskrail worker --concurrency 4` processes, 3 interleaved rounds.',
  columns: ['measure', 'value', 'baseline', 'ratio'],
  rows: [
    e2eRow('10 ms tool seen completed by a polling client, ms p50 / p99', e2e),
    e2eRow(
      "10 ms tool seen completed by taskrail's client (ledger, push), ms p50 / p99",
      viaClient,
    ),
    [
      `${TASKS} I/O-bound tasks, seconds (min–max)`,
      `${median(two).toFixed(2)} (${spread(two)}) with 2 workers`,
      `${median(one).toFixed(2)} (${spread(one)}) with 1 worker`,
      `${speedup.toFixed(2)}× (${spread(speedups)})`,
    ],
  ],
  goals: [
    {
      text:
        `a 10 ms tool is seen completed within 13 ms p50 on Redis by taskrail's client ` +
        `(${clientP50.toFixed(2)} ms; a bare loop polling every 1 ms: ${e2eP50.toFixed(2)} ms)`,
      met: clientP50 <= 13,
    },
    {
      text: `2 workers ≥ 1.8× the throughput of 1 for an I/O-bound tool (${speedup.toFixed(2)}×)`,
      met: speedup >= 1.8,
    },
  ],
};
report(section);
process.exit(0);
