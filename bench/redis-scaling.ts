/**
 * Worker scaling on Redis (needs TASKRAIL_REDIS_URL): the drain rate of a backlog, on 1
 * `taskrail worker --concurrency 8` and on 2 `--concurrency 4` (equal total slots), for a tool
 * that burns 1 ms of CPU and for one that sleeps 100 ms. The backlog is created and dispatched
 * into a paused BullMQ queue; the workers start and say they are ready; the queue is resumed:
 * every worker starts at the same instant and nothing but the drain is timed. Beside each rate,
 * the CPU each process spent per task (/proc/PID/task/*\/schedstat), and from it the highest
 * rate two workers could reach on this machine's cores: the arithmetic ceiling of the ratio.
 */
import { cpus } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { CpuMeter, cpuBreakdown, drainCeiling, perTask } from './lib/cpu.js';
import {
  CompletionCounter,
  dropPrefix,
  exitUnlessRedis,
  freshPrefix,
  inLanes,
  loadNow,
  pidsOf,
  Producer,
  redisPid,
  startTaskrailWorker,
  startWorkers,
} from './lib/redis-bench.js';
import { median, report, spread } from './lib/stats.js';

const TITLE = 'Redis: worker scaling (backlog drain, CPU per task)';
exitUnlessRedis(TITLE);

const ROUNDS = 3;
const SLOTS = 8;
const BURN = { tool: 'cpu_burn', args: { ms: 1 }, tasks: 1500 };
const SLEEP = { tool: 'io_wait', args: { ms: 100 }, tasks: 320 };
type Job = typeof BURN;

interface Drain {
  perSecond: number;
  /** CPU ms per task: workers (summed), redis, this process (the observer). */
  cpu: Record<string, number>;
  load: number;
}

const { prefix, storeUrl } = freshPrefix();
const producer = await Producer.open(storeUrl, prefix);
const counter = await CompletionCounter.open(prefix);
const redis = await redisPid();

/** One drain of `job.tasks` tasks by `workers` processes of SLOTS / workers slots. */
async function drain(job: Job, workers: number): Promise<Drain> {
  await producer.queue.pause();
  const base = counter.count;
  await inLanes(job.tasks, 32, () => producer.create(job.tool, job.args));
  const children = await startWorkers(workers, () =>
    startTaskrailWorker(storeUrl, SLOTS / workers),
  );
  try {
    await sleep(1000); // start-up work (the first recovery scan) is not the drain
    const meter = new CpuMeter({ workers: pidsOf(children), redis: [redis], bench: [process.pid] });
    // The last slots' worth ends on a draining queue: stop the clock before it.
    const counted = job.tasks - SLOTS;
    meter.start();
    const started = performance.now();
    await producer.queue.resume();
    await counter.reach(base + counted);
    const seconds = (performance.now() - started) / 1000;
    const cpu = perTask(meter.read(), counted);
    await counter.reach(base + job.tasks);
    return { perSecond: counted / seconds, cpu, load: loadNow() };
  } finally {
    await Promise.all(children.map((child) => child.stop()));
  }
}

const runs: Record<string, Drain[]> = { burn1: [], burn2: [], sleep1: [], sleep2: [] };
await drain(BURN, 1); // warm-up: Redis, the scripts, the file cache
for (let round = 0; round < ROUNDS; round += 1) {
  const order: [string, Job, number][] = [
    ['burn1', BURN, 1],
    ['burn2', BURN, 2],
    ['sleep1', SLEEP, 1],
    ['sleep2', SLEEP, 2],
  ];
  for (const [key, job, workers] of round % 2 === 0 ? order : [...order].reverse()) {
    runs[key]?.push(await drain(job, workers));
  }
}
counter.close();
await producer.close();
await dropPrefix(prefix);

const cores = cpus().length;
const rates = (key: string) => (runs[key] ?? []).map((run) => run.perSecond);
const ratios = (a: string, b: string) => rates(a).map((rate, i) => rate / (rates(b)[i] as number));
const medianCpu = (key: string): Record<string, number> => {
  const list = runs[key] ?? [];
  const names = Object.keys(list[0]?.cpu ?? {});
  return Object.fromEntries(names.map((n) => [n, median(list.map((run) => run.cpu[n] ?? 0))]));
};
const loads = Object.values(runs).flatMap((list) => list.map((run) => run.load));
const loadText = `load ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`;

/** The highest drain rate the CPU per task of a run kind allows on `on` cores. */
function cpuBound(key: string, workers: number, on: number): number {
  const cpu = medianCpu(key);
  return drainCeiling({
    workers,
    cores: on,
    workerMs: cpu['workers'] ?? 0,
    otherMs: (cpu['redis'] ?? 0) + (cpu['bench'] ?? 0),
    storeMs: cpu['redis'] ?? 0,
  });
}

/**
 * The ratio the CPU per task allows, whatever the load: two workers' CPU-bound rate over one
 * worker's, each from the CPU its own runs spent per task.
 */
const ceilingRatio = (on: number) => cpuBound('burn2', 2, on) / cpuBound('burn1', 1, on);

const row = (label: string, key: string, baseline?: string) => {
  const cpu = medianCpu(key);
  const total = Object.values(cpu).reduce((a, b) => a + b, 0);
  const up = baseline === undefined ? undefined : ratios(key, baseline);
  return [
    label,
    `${Math.round(median(rates(key)))} (${spread(rates(key), 0)})`,
    up === undefined ? 'baseline' : `${median(up).toFixed(2)}× (${spread(up)})`,
    `${cpuBreakdown(cpu)} = ${total.toFixed(2)}`,
    // Little's law: slots busy ÷ tasks per second = how long each task held its slot.
    ((SLOTS * 1000) / median(rates(key))).toFixed(1),
  ];
};
const burnUp = median(ratios('burn2', 'burn1'));
const sleepUp = median(ratios('sleep2', 'sleep1'));
const ceilingHere = ceilingRatio(cores);
const ceilingSpread = ceilingRatio(4);
report({
  title: TITLE,
  description:
    `Drain rate of a backlog: ${BURN.tasks} tasks burning ${BURN.args.ms} ms of CPU, then ${SLEEP.tasks} sleeping ${SLEEP.args.ms} ms, created and dispatched (the runtime's createTask, BullMQ in dispatch mode, as a \`serve --no-worker\` replica does) into a paused queue; ` +
    `the workers start (1 \`taskrail worker --concurrency ${SLOTS}\`, or 2 with ${SLOTS / 2} slots each), report ready, idle 1 s, then the queue is resumed and tasks/s are timed until ${SLOTS} remain (completions counted from the store's change notices). ${ROUNDS} rounds, order alternating. ` +
    `CPU per task: each process's on-CPU time during the timed drain (/proc/PID/task/*/schedstat; workers summed, Redis, this observer) divided by the tasks drained. ` +
    `The ceiling: with CPU per task w (the workers' summed) and x (Redis + observer), n workers cannot drain faster than min(cores / (w + x), n / w, 1 / redis), however well the load spreads; the 2-worker bound over the 1-worker bound, each from its own runs' CPU, is the highest ratio the CPU allows: ${ceilingHere.toFixed(2)}× on these ${cores} cores (${ceilingSpread.toFixed(2)}× with 4 cores, a core for each process). CPU per task moves little with the load, so this bound holds on a quiet machine too, where the measured ratio should approach it. A rate far below its CPU bound is bound by latency or by the cores' other users: the last column (slots ÷ tasks/s) is how long each task held a worker slot. ${loadText} (1-minute load average; other work shares the cores).`,
  columns: [
    'workers × slots, job',
    'tasks/s (median, min–max)',
    'ratio',
    'CPU ms per task (median)',
    'ms a task holds a slot',
  ],
  rows: [
    row(`1 × ${SLOTS}, 1 ms CPU burn`, 'burn1'),
    row(`2 × ${SLOTS / 2}, 1 ms CPU burn`, 'burn2', 'burn1'),
    row(`1 × ${SLOTS}, 100 ms sleep`, 'sleep1'),
    row(`2 × ${SLOTS / 2}, 100 ms sleep`, 'sleep2', 'sleep1'),
  ],
  goals: [
    {
      text: `2 workers ≥ 1.7× one on a tool burning 1 ms of CPU (${burnUp.toFixed(2)}×; the CPU per task caps it at ${ceilingHere.toFixed(2)}× on ${cores} cores, ${loadText}; fails below 1.7)`,
      met: burnUp >= 1.7,
    },
    {
      text: `2 workers × ${SLOTS / 2} slots ≥ 0.95× 1 worker × ${SLOTS} slots on 100 ms sleeps (${sleepUp.toFixed(2)}×; fails below 0.95)`,
      met: sleepUp >= 0.95,
    },
  ],
});
process.exit(0);
