/**
 * Fair share across a fleet of workers: what the more-than-half rule costs. One `serve
 * --no-worker` replica with two bearer principals, two `taskrail worker`s of 4 slots, on Redis +
 * BullMQ and on PostgreSQL + graphile-worker. A round creates a batch of short tasks and times
 * it until the last one has run: either all of alice's (one principal: the rule never holds a
 * job back, but a worker whose principal holds half of its slots still looks at the queue), or
 * alice's and bob's in turn (two principals: jobs stand back for the other's). Both kinds run
 * on the same fleet, interleaved round by round. Prints one JSON line (see scripts/bench.mjs).
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  checked,
  endpoint,
  MAIN,
  pause,
  startServer,
  wire2026,
  type Call,
  type ChildServer,
} from './lib/http.js';
import { processCpuNs } from './lib/load.js';
import { dropStoreSchema, freshSchema, PG_BASE } from './lib/pg-bench.js';
import { dropPrefix, freshPrefix, loadNow, REDIS_BASE } from './lib/redis-bench.js';
import { median, report, spread } from './lib/stats.js';

const TOOLS = '.build/bench/lib/fleet-tools.js';
const WORKERS = 2;
const SLOTS = 4;
const TASKS = 240;
const RUN_MS = 5;
const IN_FLIGHT = 16;
const ROUNDS = 5;
const KINDS = ['one', 'two'] as const;
type Kind = (typeof KINDS)[number];

interface Round {
  perSecond: number;
  workerCpuUs: number;
}

const dir = mkdtempSync(join(tmpdir(), 'taskrail-bench-fleet-'));
const journal = join(dir, 'journal');
writeFileSync(journal, '');
writeFileSync(join(dir, 'tokens.json'), JSON.stringify({ 'tok-a': 'alice', 'tok-b': 'bob' }));
const finished = () => statSync(journal).size;

/** Creates TASKS tasks (IN_FLIGHT at a time) and waits until all of them have run. */
async function round(url: string, kind: Kind, workers: ChildServer[]): Promise<Round> {
  const ep = endpoint(url);
  const work = wire2026('tools/call', { name: 'work', arguments: { ms: RUN_MS } }, true);
  const calls = (kind === 'one' ? ['tok-a'] : ['tok-a', 'tok-b']).map((token) => ({
    ...work,
    headers: { ...work.headers, authorization: `Bearer ${token}` },
  }));
  const target = finished() + TASKS;
  const cpu = () => workers.reduce((sum, w) => sum + processCpuNs(w.process.pid as number), 0);
  const [cpu0, t0] = [cpu(), performance.now()];
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < TASKS; i = next++) await checked(ep, calls[i % calls.length] as Call);
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  while (finished() < target) await pause(2);
  const seconds = (performance.now() - t0) / 1000;
  ep.close();
  return { perSecond: TASKS / seconds, workerCpuUs: (cpu() - cpu0) / 1000 / TASKS };
}

/** Runs the rounds of both kinds, interleaved, on one fleet of the store at `storeUrl`. */
async function fleet(storeUrl: string): Promise<Record<Kind, Round[]>> {
  const quiet = ['--tools', TOOLS, '--log-level', 'warn', '--store', storeUrl];
  const env = { TASKRAIL_BENCH_JOURNAL: journal };
  const auth = ['--auth', `tokens:${join(dir, 'tokens.json')}`];
  const replica = await startServer(
    MAIN,
    ['serve', '--port', '0', '--no-worker', ...quiet, ...auth],
    env,
  );
  const workers = await Promise.all(
    Array.from({ length: WORKERS }, () =>
      startServer(MAIN, ['worker', '--concurrency', String(SLOTS), ...quiet], env, /(ready)/),
    ),
  );
  try {
    for (const kind of KINDS) await round(replica.url, kind, workers); // warm-up
    const rounds: Record<Kind, Round[]> = { one: [], two: [] };
    for (let i = 0; i < ROUNDS; i++) {
      for (const kind of i % 2 === 0 ? KINDS : [...KINDS].reverse()) {
        rounds[kind].push(await round(replica.url, kind, workers));
      }
    }
    return rounds;
  } finally {
    await Promise.all([replica, ...workers].map((child) => child.stop()));
  }
}

const rows: (string | number)[][] = [];
const goals: { text: string; met: boolean }[] = [];
function record(engine: string, rounds: Record<Kind, Round[]>, load: number): void {
  const ratios = rounds.two.map((r, i) => r.perSecond / (rounds.one[i] as Round).perSecond);
  const cpuRatios = rounds.two.map((r, i) => (rounds.one[i] as Round).workerCpuUs / r.workerCpuUs);
  const rate = (kind: Kind) => rounds[kind].map((r) => r.perSecond);
  const cpu = (kind: Kind) => rounds[kind].map((r) => r.workerCpuUs);
  for (const kind of KINDS) {
    const two = kind === 'two';
    rows.push([
      `${engine}, ${two ? 'alice and bob in turn' : 'alice alone'}`,
      `${median(rate(kind)).toFixed(0)} (${spread(rate(kind), 0)})`,
      `${median(cpu(kind)).toFixed(0)} (${spread(cpu(kind), 0)})`,
      two ? `${median(ratios).toFixed(2)}× (${spread(ratios)})` : '(baseline)',
      two ? `${median(cpuRatios).toFixed(2)}×` : '',
      load.toFixed(1),
    ]);
  }
  const met = median(ratios) >= 0.9;
  goals.push({
    text: `${engine}: two principals drain ≥ 0.9× as fast as one (${median(ratios).toFixed(2)}×)`,
    met,
  });
}

/** A fresh place on each store that is configured: its URL, and how to remove it. */
const engines = [
  {
    name: 'Redis + BullMQ',
    on: REDIS_BASE !== '',
    open: () => {
      const { prefix, storeUrl } = freshPrefix();
      return { url: storeUrl, drop: () => dropPrefix(prefix) };
    },
  },
  {
    name: 'PostgreSQL + graphile-worker',
    on: PG_BASE !== '',
    open: () => {
      const { schema, url } = freshSchema();
      return { url, drop: () => dropStoreSchema(schema) };
    },
  },
];
try {
  for (const engine of engines.filter((e) => e.on)) {
    const { url, drop } = engine.open();
    const load = loadNow();
    try {
      record(engine.name, await fleet(url), load);
    } finally {
      await drop();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

report({
  title: 'Fair share across a fleet of workers: two principals against one',
  description:
    `One \`serve --no-worker\` replica with \`--auth\` (two bearer principals) and ${WORKERS} \`taskrail worker\`s of ${SLOTS} slots on one store. ` +
    `A round creates ${TASKS} tasks of a ${RUN_MS} ms tool (${IN_FLIGHT} creates in flight) and ends when the last has run (the tool appends a byte to a file). ` +
    '**alice alone**: every task is alice’s, so the more-than-half rule never holds a job back (a worker where she holds half of the slots still looks at the next jobs, at most once per 25 ms while she is alone in the queue). ' +
    '**alice and bob in turn**: creates alternate, so jobs stand back for the other principal’s whenever one holds half of a worker. ' +
    `Tasks per second from the first create to the last run, ${ROUNDS} rounds of each on the same fleet, interleaved (order swapped every round) after one warm-up of each; worker CPU: both workers’ on-CPU time (schedstat) per task. ` +
    'Ratios: two principals / one for tasks per second, one / two for worker CPU (below 1 = two cost more), medians of the per-round ratios (min–max). Skipped without TASKRAIL_REDIS_URL / TASKRAIL_POSTGRES_URL. Load: the 1-minute load average at the start.',
  columns: [
    'fleet and principals',
    'tasks/s (min–max)',
    'worker CPU µs per task (min–max)',
    'ratio to alice alone',
    'worker CPU ratio',
    'load',
  ],
  rows,
  goals,
});
process.exit(0);
