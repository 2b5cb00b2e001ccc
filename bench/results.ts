/**
 * Results of any size and output while running: a 10 MB result's create-to-completed time and
 * the event-loop p99 while it is written and read back in 40,000-character pages (goal ≤ 50 ms),
 * beside the loop's p99 at rest in the same run (the machine's own noise at its load),
 * `ctx.output` throughput of one task (lines/s), and the delay from `ctx.output` to a store
 * event listener in another store instance (what a subscriber's notification waits on), p50,
 * on SQLite and (with TASKRAIL_REDIS_URL / TASKRAIL_POSTGRES_URL) Redis and PostgreSQL.
 * Run alone: `npm run bench -- --only results`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { TaskRuntime } from '../src/runtime/runtime.js';
import type { RunnableTool } from '../src/runtime/tool.js';
import type { TaskStore } from '../src/store/port.js';
import { readRange, sliceText } from '../src/store/text.js';
import { openPostgresStore } from '../src/stores/postgres/index.js';
import { openRedisStore } from '../src/stores/redis/index.js';
import { SqliteTaskStore } from '../src/stores/sqlite/index.js';
import { isTerminal } from '../src/task/status.js';
import { dropStoreSchema, freshSchema, PG_BASE } from './lib/pg-bench.js';
import { percentile, report } from './lib/stats.js';

const BIG = 10 * 1024 * 1024;
const PAGE = 40_000;
const LINES = 20_000;
const SAMPLES = 20;
const GOAL_MS = 50;
const LINES_GOAL = 10_000;
const EVENT_GOAL_MS = 50;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const silent = { info() {}, warn() {}, error() {} };

/** p99 lateness of a 5 ms timer while `work` runs. */
async function loopP99<T>(work: () => Promise<T>): Promise<{ value: T; p99: number }> {
  const late: number[] = [];
  let expected = performance.now() + 5;
  const timer = setInterval(() => {
    const now = performance.now();
    late.push(Math.max(0, now - expected));
    expected = now + 5;
  }, 5);
  const value = await work();
  clearInterval(timer);
  late.push(Math.max(0, performance.now() - expected));
  return { value, p99: percentile(late, 99) };
}

const line = 'x'.repeat(99) + '\n';
/**
 * The tool's 10 MiB, flat, as a string read from a file or a buffer is. A string built by
 * concatenation (`repeat`, `+=`) is a tree V8 flattens in one piece the first time anything
 * reads it (the tool's own cost, whoever reads first): `flattenMs` measures that apart.
 */
const BIG_TEXT = Buffer.from(line.repeat(BIG / line.length)).toString('utf8');

/** How long the loop stops for when a concatenated 10 MiB string is first read. */
function flattenMs(): number {
  const built = line.repeat(BIG / line.length);
  const started = performance.now();
  built.charCodeAt(BIG / 2);
  return performance.now() - started;
}

const tools: RunnableTool[] = [
  {
    name: 'big',
    task: { mode: 'optional' },
    handler: () => ({ content: [{ type: 'text', text: BIG_TEXT }] }),
  },
  {
    name: 'lines',
    task: { mode: 'optional' },
    handler: async (_args, ctx) => {
      for (let i = 0; i < LINES; i++) await ctx.output(`line ${i} of the build log\n`);
      return { content: [{ type: 'text', text: 'ok' }] };
    },
  },
  {
    name: 'ticks',
    task: { mode: 'optional' },
    handler: async (_args, ctx) => {
      for (let i = 0; i < SAMPLES; i++) {
        await pause(300);
        await ctx.output(`${performance.timeOrigin + performance.now()}\n`);
      }
      return { content: [{ type: 'text', text: 'ok' }] };
    },
  },
];
const catalog = { get: (name: string) => tools.find((tool) => tool.name === name) };

async function settle(runtime: TaskRuntime, tool: string): Promise<{ id: string; ms: number }> {
  const started = performance.now();
  const task = await runtime.createTask({ tool, arguments: {}, principal: 'bench' });
  for (;;) {
    const current = await runtime.getTask(task.id, 'bench');
    if (current !== undefined && isTerminal(current.status)) break;
    await pause(5);
  }
  return { id: task.id, ms: performance.now() - started };
}

/** Reads the whole result back in pages, one page per event-loop turn. */
async function readInPages(peer: TaskStore, id: string): Promise<number> {
  let offset = 0;
  for (;;) {
    const range = readRange(offset, PAGE);
    const stored = await peer.readText(id, 'result', range.offset, range.length);
    const slice = sliceText(stored ?? { chunks: [], end: 0, dropped: 0 }, offset, PAGE);
    if (slice.text === '') return offset;
    offset = slice.start + slice.text.length;
    // Each page is its own request in a server: let the loop turn between them.
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Delays from `ctx.output` to the peer's `task:text` event, one per tick the tool writes. */
async function outputDelays(runtime: TaskRuntime, peer: TaskStore): Promise<number[]> {
  const delays: number[] = [];
  const stop = peer.events.on('task:text', (event) => {
    if (event.kind !== 'output') return;
    void peer.readText(event.id, 'output', Math.max(0, event.end - 40), 40).then((text) => {
      const last = text?.chunks.at(-1)?.text.trim().split('\n').at(-1);
      if (last !== undefined)
        delays.push(performance.timeOrigin + performance.now() - Number(last));
    });
  });
  await settle(runtime, 'ticks');
  await pause(200);
  stop();
  return delays;
}

async function measure(name: string, store: TaskStore, peer: TaskStore) {
  const runtime = new TaskRuntime({ store, tools: catalog, logger: silent });
  await settle(runtime, 'lines'); // warm up: the first task of a store pays its statements
  const written = await loopP99(() => settle(runtime, 'big'));
  const rest = await loopP99(() => pause(Math.max(200, written.value.ms)));
  const read = await loopP99(() => readInPages(peer, written.value.id));
  const lines = await settle(runtime, 'lines');
  const delays = await outputDelays(runtime, peer);
  await runtime.stop(1000);
  return [
    name,
    (written.value.ms / 1000).toFixed(2),
    written.p99.toFixed(1),
    read.p99.toFixed(1),
    rest.p99.toFixed(1),
    Math.round(read.value / PAGE),
    Math.round(LINES / (lines.ms / 1000)),
    delays.length > 0 ? percentile(delays, 50).toFixed(1) : 'n/a',
  ];
}

async function measureRedis(url: string): Promise<(string | number)[]> {
  const prefix = `bench-results-${randomUUID()}`;
  const redis = await openRedisStore(`${url}?prefix=${prefix}`);
  const peer = await openRedisStore(`${url}?prefix=${prefix}`);
  try {
    return await measure('Redis', redis, peer);
  } finally {
    await redis.close();
    await peer.close();
  }
}

async function measurePostgres(): Promise<(string | number)[]> {
  const { schema, url } = freshSchema();
  const store = await openPostgresStore(url);
  const peer = await openPostgresStore(url);
  try {
    return await measure('PostgreSQL', store, peer);
  } finally {
    await store.close();
    await peer.close();
    await dropStoreSchema(schema);
  }
}

const rows: (string | number)[][] = [];
const flatten = flattenMs();
const dir = mkdtempSync(join(tmpdir(), 'taskrail-bench-results-'));
try {
  const store = new SqliteTaskStore(join(dir, 'tasks.db'));
  rows.push(await measure('SQLite', store, store));
  await store.close();
  const redisUrl = process.env['TASKRAIL_REDIS_URL'];
  if (redisUrl !== undefined) rows.push(await measureRedis(redisUrl));
  if (PG_BASE !== '') rows.push(await measurePostgres());
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const worst = Math.max(...rows.flatMap((row) => [Number(row[2]), Number(row[3])]));
const slowestLines = Math.min(...rows.map((row) => Number(row[6])));
const events = rows.map((row) => Number(row[7])).filter((ms) => !Number.isNaN(ms));
report({
  title: 'Results of any size and output while running',
  description:
    'One process: a tool returns 10 MiB of text (kept whole in the store in 64 Ki-character chunks, the record shortened); create to completed, with the event-loop p99 (lateness of a 5 ms timer) while it is written and while another store instance reads it back in 40,000-character pages (one page per event-loop turn, as separate requests would be), beside the same p99 at rest in the same run (no task running: the noise of the machine at its load). ' +
    `The tool's text is a flat string, as one read from a file is; a 10 MiB string built by concatenation is a tree V8 flattens in one piece when it is first read, whoever reads it — here that stopped the loop ${flatten.toFixed(0)} ms, the tool's own cost, not counted above. ` +
    "A tool writing 20,000 lines through ctx.output (coalesced, at most five writes a second); lines/s until the task completed with all of them stored. Delay from ctx.output to a task:text event in another store instance (SQLite: the same instance, its events are local; Redis: pub/sub; PostgreSQL: LISTEN/NOTIFY), p50 of 20, each after a 300 ms quiet spell; a subscriber's first notification is sent as the event arrives, later ones at most four a second.",
  columns: [
    'store',
    '10 MiB result: create → completed (s)',
    'loop p99 while written (ms)',
    'loop p99 while read in pages (ms)',
    'loop p99 at rest, same run (ms)',
    'pages',
    'ctx.output lines/s',
    'ctx.output → event p50 (ms)',
  ],
  rows,
  goals: [
    {
      text: `event-loop p99 ≤ ${GOAL_MS} ms while a 10 MiB result is written and read`,
      met: worst <= GOAL_MS,
    },
    {
      text: `ctx.output ≥ ${LINES_GOAL.toLocaleString('en')} lines/s from one task on every store`,
      met: slowestLines >= LINES_GOAL,
    },
    {
      text: `ctx.output → event p50 ≤ ${EVENT_GOAL_MS} ms on every store`,
      met: events.length === rows.length && events.every((ms) => ms <= EVENT_GOAL_MS),
    },
  ],
});
