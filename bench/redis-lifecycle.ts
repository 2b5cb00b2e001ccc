/**
 * The Redis task lifecycle against raw BullMQ on the same Redis, in the same run (needs
 * TASKRAIL_REDIS_URL). taskrail: the runtime's createTask (the task written to the store, then
 * dispatched to BullMQ, as a `serve --no-worker` replica does) → `taskrail worker` claims,
 * runs a no-op tool, writes its result → complete. Raw BullMQ: Queue.add → a bare Worker's
 * no-op processor → complete. Both with the same worker concurrency, the same producers in
 * flight, removeOnComplete, and the raw side's natural minimum of connections.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { CpuMeter, cpuBreakdown, perTask } from './lib/cpu.js';
import { startServer, type ChildServer } from './lib/http.js';
import {
  dropPrefix,
  exitUnlessRedis,
  freshPrefix,
  inLanes,
  loadNow,
  pidsOf,
  Producer,
  REDIS_BASE,
  redisPid,
  startTaskrailWorker,
} from './lib/redis-bench.js';
import { median, report, spread } from './lib/stats.js';

const TITLE = 'Redis: task lifecycle vs raw BullMQ';
exitUnlessRedis(TITLE);

const TASKS = 2000;
const ROUNDS = 3;
const SLOTS = 8;
const IN_FLIGHT = 32;

interface Side {
  /** Enqueues one no-op unit of work. */
  add(): Promise<unknown>;
  queue: Queue;
  startWorker(): Promise<ChildServer>;
  close(): Promise<void>;
}

interface Run {
  perSecond: number;
  cpu: Record<string, number>;
  load: number;
}

async function taskrailSide(): Promise<Side & { prefix: string }> {
  const { prefix, storeUrl } = freshPrefix();
  const producer = await Producer.open(storeUrl, prefix);
  return {
    prefix,
    add: () => producer.create('noop', {}),
    queue: producer.queue,
    startWorker: () => startTaskrailWorker(storeUrl, SLOTS),
    close: () => producer.close(),
  };
}

async function rawSide(): Promise<Side & { prefix: string }> {
  const { prefix } = freshPrefix();
  const queue = new Queue('tasks', {
    connection: new Redis(REDIS_BASE, { maxRetriesPerRequest: null }),
    prefix,
  });
  // What a queue-native application would enqueue for the same call: the tool and its arguments.
  const data = { tool: 'noop', arguments: {} };
  const options = { removeOnComplete: true, removeOnFail: true, attempts: 1 };
  const script = '.build/bench/lib/bullmq-worker.js';
  return {
    prefix,
    add: () => queue.add('run', data, options),
    queue,
    startWorker: () => startServer(script, [REDIS_BASE, prefix, String(SLOTS)], {}, /^(ready)$/),
    close: async () => {
      await queue.close();
      await queue.disconnect();
    },
  };
}

/** Resolves once the queue has no job waiting, paused, delayed or active. */
async function drained(queue: Queue): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const counts = await queue.getJobCounts('wait', 'delayed', 'prioritized', 'active');
    if (Object.values(counts).every((n) => n === 0)) return;
    if (Date.now() > deadline) throw new Error(`not drained: ${JSON.stringify(counts)}`);
    await sleep(5);
  }
}

const redis = await redisPid();

/** Create → run → complete, producer and worker at once: tasks/s from first add to drained. */
async function lifecycle(side: Side): Promise<Run> {
  const worker = await side.startWorker();
  try {
    await sleep(500);
    const meter = new CpuMeter({ worker: pidsOf([worker]), redis: [redis], bench: [process.pid] });
    meter.start();
    const started = performance.now();
    await inLanes(TASKS, IN_FLIGHT, () => side.add());
    await drained(side.queue);
    const seconds = (performance.now() - started) / 1000;
    return { perSecond: TASKS / seconds, cpu: perTask(meter.read(), TASKS), load: loadNow() };
  } finally {
    await worker.stop();
  }
}

/** The worker alone: a backlog added to a paused queue, then drained. */
async function drain(side: Side): Promise<Run> {
  await side.queue.pause();
  await inLanes(TASKS, IN_FLIGHT, () => side.add());
  const worker = await side.startWorker();
  try {
    await sleep(1000);
    const meter = new CpuMeter({ worker: pidsOf([worker]), redis: [redis], bench: [process.pid] });
    meter.start();
    const started = performance.now();
    await side.queue.resume();
    await drained(side.queue);
    const seconds = (performance.now() - started) / 1000;
    return { perSecond: TASKS / seconds, cpu: perTask(meter.read(), TASKS), load: loadNow() };
  } finally {
    await worker.stop();
  }
}

const taskrail = await taskrailSide();
const raw = await rawSide();
const runs: Record<string, Run[]> = { tLife: [], rLife: [], tDrain: [], rDrain: [] };
await lifecycle(taskrail); // warm-up
await lifecycle(raw);
for (let round = 0; round < ROUNDS; round += 1) {
  const order: [string, () => Promise<Run>][] = [
    ['tLife', () => lifecycle(taskrail)],
    ['rLife', () => lifecycle(raw)],
    ['tDrain', () => drain(taskrail)],
    ['rDrain', () => drain(raw)],
  ];
  for (const [key, measure] of round % 2 === 0 ? order : [...order].reverse()) {
    runs[key]?.push(await measure());
  }
}
await taskrail.close();
await raw.close();
await dropPrefix(taskrail.prefix);
await dropPrefix(raw.prefix);

const rates = (key: string) => (runs[key] ?? []).map((run) => run.perSecond);
const ratios = (a: string, b: string) => rates(a).map((rate, i) => rate / (rates(b)[i] as number));
const medianCpu = (key: string): Record<string, number> => {
  const list = runs[key] ?? [];
  const names = Object.keys(list[0]?.cpu ?? {});
  return Object.fromEntries(names.map((n) => [n, median(list.map((run) => run.cpu[n] ?? 0))]));
};
const totalCpu = (key: string) => Object.values(medianCpu(key)).reduce((a, b) => a + b, 0);
const loads = Object.values(runs).flatMap((list) => list.map((run) => run.load));
const loadText = `load ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`;
const row = (label: string, key: string, baseline?: string) => {
  const up = baseline === undefined ? undefined : ratios(key, baseline);
  return [
    label,
    `${Math.round(median(rates(key)))} (${spread(rates(key), 0)})`,
    up === undefined ? 'baseline' : `${median(up).toFixed(2)}× (${spread(up)})`,
    `${cpuBreakdown(medianCpu(key))} = ${totalCpu(key).toFixed(3)}`,
  ];
};
const lifeUp = median(ratios('tLife', 'rLife'));
const cpuUp = totalCpu('rLife') / totalCpu('tLife');
report({
  title: TITLE,
  description:
    `${TASKS} no-op units of work per run, ${IN_FLIGHT} producer calls in flight, one worker process with ${SLOTS} slots, on the same Redis in the same run; ${ROUNDS} rounds, order alternating, after one warm-up each. ` +
    "Lifecycle: producer and worker at once, timed from the first add until the queue is drained (no job waiting or active). taskrail: `runtime.createTask` (the store's create script, then a BullMQ job named after the task; the producer is this process, as a `serve --no-worker` replica without HTTP) → `taskrail worker` (the claim, which returns the record; run; write the result; complete the job). " +
    'Raw BullMQ: `Queue.add` of `{tool, arguments}` → a bare `Worker` with a no-op processor; removeOnComplete; its natural connections (producer 1, worker 2; taskrail: producer 3, worker 4). ' +
    "Drain: the same work added to a paused queue first, the worker started, then the queue resumed: the worker's own rate. " +
    `CPU per task: each process's on-CPU time during the run (/proc/PID/task/*/schedstat) over the tasks: the worker, Redis, and this process (the producer and the poll). A ratio fails below the goal by throughput; the CPU ratio says what it would be with the cores to itself. ` +
    'Round trips each worker slot waits for per task: taskrail 3 (claim, result write, BullMQ completing the job and fetching the next), raw BullMQ 1 (the completion that fetches the next); per create: 2 (create script, add) against 1 (docs/scaling.md). ' +
    `${loadText}.`,
  columns: ['path', 'tasks/s (median, min–max)', 'ratio', 'CPU ms per task (median)'],
  rows: [
    row('raw BullMQ: add → process → complete', 'rLife'),
    row('taskrail: create → run → complete', 'tLife', 'rLife'),
    row('raw BullMQ worker draining a backlog', 'rDrain'),
    row('taskrail worker draining a backlog', 'tDrain', 'rDrain'),
  ],
  goals: [
    {
      text: `taskrail's lifecycle ≥ 0.7× raw BullMQ add → process → complete (${lifeUp.toFixed(2)}× by throughput, ${cpuUp.toFixed(2)}× by total CPU per task; ${loadText}; fails below 0.7)`,
      met: lifeUp >= 0.7,
    },
  ],
});
process.exit(0);
