/**
 * Results of any size and output while running: a 10 MB result's create-to-completed time and
 * the event-loop p99 while it is written and read back in 40,000-character pages (goal ≤ 50 ms),
 * `ctx.output` throughput of one task (lines/s), and the delay from `ctx.output` to a store
 * event listener in another store instance (what a subscriber's notification waits on), p50,
 * on SQLite and (with TASKRAIL_REDIS_URL) Redis. Run alone: `npm run bench -- --only results`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { TaskRuntime } from '../src/runtime/runtime.js';
import type { RunnableTool } from '../src/runtime/tool.js';
import type { TaskStore } from '../src/store/port.js';
import { readRange, sliceText } from '../src/store/text.js';
import { openRedisStore } from '../src/stores/redis/index.js';
import { SqliteTaskStore } from '../src/stores/sqlite/index.js';
import { isTerminal } from '../src/task/status.js';
import { percentile, report } from './lib/stats.js';

const BIG = 10 * 1024 * 1024;
const PAGE = 40_000;
const LINES = 20_000;
const SAMPLES = 20;
const GOAL_MS = 50;
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

const big = 'x'.repeat(99) + '\n';
const tools: RunnableTool[] = [
  {
    name: 'big',
    task: { mode: 'optional' },
    handler: () => ({ content: [{ type: 'text', text: big.repeat(BIG / big.length) }] }),
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

async function measure(name: string, store: TaskStore, peer: TaskStore) {
  const runtime = new TaskRuntime({ store, tools: catalog, logger: silent });
  const written = await loopP99(() => settle(runtime, 'big'));
  const read = await loopP99(async () => {
    let offset = 0;
    for (;;) {
      const range = readRange(offset, PAGE);
      const stored = await peer.readText(written.value.id, 'result', range.offset, range.length);
      const slice = sliceText(stored ?? { chunks: [], end: 0, dropped: 0 }, offset, PAGE);
      if (slice.text === '') return offset;
      offset = slice.start + slice.text.length;
      // Each page is its own request in a server: let the loop turn between them.
      await new Promise((resolve) => setImmediate(resolve));
    }
  });
  const lines = await settle(runtime, 'lines');
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
  await runtime.stop(1000);
  return [
    name,
    (written.value.ms / 1000).toFixed(2),
    written.p99.toFixed(1),
    read.p99.toFixed(1),
    Math.round(read.value / PAGE),
    Math.round(LINES / (lines.ms / 1000)),
    delays.length > 0 ? percentile(delays, 50).toFixed(1) : 'n/a',
  ];
}

const rows: (string | number)[][] = [];
const dir = mkdtempSync(join(tmpdir(), 'taskrail-bench-results-'));
try {
  const file = join(dir, 'tasks.db');
  const store = new SqliteTaskStore(file);
  rows.push(await measure('SQLite', store, store));
  await store.close();
  const url = process.env['TASKRAIL_REDIS_URL'];
  if (url !== undefined) {
    const prefix = `bench-results-${randomUUID()}`;
    const redis = await openRedisStore(`${url}?prefix=${prefix}`);
    const peer = await openRedisStore(`${url}?prefix=${prefix}`);
    rows.push(await measure('Redis', redis, peer));
    await redis.close();
    await peer.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const worst = Math.max(...rows.flatMap((row) => [Number(row[2]), Number(row[3])]));
report({
  title: 'Results of any size and output while running',
  description:
    'One process: a tool returns 10 MiB of text (kept whole in the store in 64 Ki-character chunks, the record shortened); create to completed, with the event-loop p99 (lateness of a 5 ms timer) while it is written and while another store instance reads it back in 40,000-character pages (one page per event-loop turn, as separate requests would be). A tool writing 20,000 lines through ctx.output (coalesced, at most five writes a second); lines/s until the task completed with all of them stored. Delay from ctx.output to a task:text event in another store instance (SQLite: the same instance, its events are local; Redis: pub/sub), p50 of 20, each after a 300 ms quiet spell.',
  columns: [
    'store',
    '10 MiB result: create → completed (s)',
    'loop p99 while written (ms)',
    'loop p99 while read in pages (ms)',
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
  ],
});
