/**
 * The engine alone (no HTTP): how long after a 10 ms tool finishes does its task read as
 * completed, how much memory a parked task costs, and what an idle started runtime burns.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskRuntime } from '../src/runtime/runtime.js';
import type { ToolCatalog } from '../src/runtime/api.js';
import type { RunnableTool } from '../src/runtime/tool.js';
import type { TaskStore } from '../src/store/port.js';
import { MemoryTaskStore } from '../src/stores/memory/index.js';
import { SqliteTaskStore } from '../src/stores/sqlite/index.js';
import { gc, median, percentile, report, spread, type Section } from './_stats.js';

const silent = { info() {}, warn() {}, error() {} };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const tools: RunnableTool[] = [
  {
    name: 'ten_ms',
    task: { mode: 'optional' },
    handler: async () => {
      await sleep(10);
      return { content: [] };
    },
  },
  {
    name: 'park',
    task: { mode: 'optional' },
    handler: async (_a, ctx) => {
      await ctx.input({
        q: {
          method: 'elicitation/create',
          params: { message: 'q', requestedSchema: { type: 'object', properties: {} } },
        },
      });
      return { content: [] };
    },
  },
];
const catalog: ToolCatalog = { get: (name) => tools.find((t) => t.name === name) };

function sqlite(): TaskStore {
  return new SqliteTaskStore(join(mkdtempSync(join(tmpdir(), 'taskrail-bench-')), 'tasks.db'));
}

async function completionLatency(store: TaskStore, rounds: number): Promise<number[]> {
  const runtime = new TaskRuntime({ store, tools: catalog, logger: silent });
  const samples: number[] = [];
  for (let i = 0; i < rounds; i += 1) {
    const started = performance.now();
    const done = new Promise<void>((resolve) => {
      const off = store.events.on('task:transition', ({ to }) => {
        if (to === 'completed') {
          off();
          resolve();
        }
      });
    });
    await runtime.createTask({ tool: 'ten_ms', arguments: {}, principal: 'bench' });
    await done;
    samples.push(performance.now() - started);
  }
  await runtime.stop();
  await store.close();
  return samples;
}

async function bareLatency(rounds: number): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < rounds; i += 1) {
    const started = performance.now();
    await sleep(10);
    samples.push(performance.now() - started);
  }
  return samples;
}

async function heapPerParkedTask(makeStore: () => TaskStore, count: number): Promise<number> {
  const store = makeStore();
  const runtime = new TaskRuntime({ store, tools: catalog, logger: silent, concurrency: 64 });
  runtime.start();
  gc();
  const before = process.memoryUsage().heapUsed;
  let parked = 0;
  const allParked = new Promise<void>((resolve) => {
    store.events.on('task:transition', ({ to }) => {
      if (to === 'input_required' && ++parked === count) resolve();
    });
  });
  for (let i = 0; i < count; i += 1)
    await runtime.createTask({ tool: 'park', arguments: { i }, principal: 'bench' });
  await allParked;
  gc();
  const perTask = (process.memoryUsage().heapUsed - before) / count;
  await runtime.stop();
  await store.close();
  return perTask;
}

async function idleCpu(seconds: number): Promise<number> {
  const store = sqlite();
  const runtime = new TaskRuntime({ store, tools: catalog, logger: silent });
  runtime.start();
  const before = process.cpuUsage();
  await sleep(seconds * 1000);
  const used = process.cpuUsage(before);
  await runtime.stop();
  await store.close();
  return (used.user + used.system) / 1000;
}

const ROUNDS = 200;
const bare = await bareLatency(ROUNDS);
const memory = await completionLatency(new MemoryTaskStore(), ROUNDS);
const onDisk = await completionLatency(sqlite(), ROUNDS);
const heapMemory = await heapPerParkedTask(() => new MemoryTaskStore(), 10_000);
const heapSqlite = await heapPerParkedTask(sqlite, 10_000);
const idleMs = await idleCpu(10);

const row = (name: string, s: number[]) => [
  name,
  median(s),
  percentile(s, 99),
  spread(s),
  median(s) / median(bare),
];
const section: Section = {
  title: 'Engine: task completion, parked-task memory, idle cost',
  description:
    'A 10 ms tool run as a task by the local executor, timed from `createTask` to the store event that it completed, ' +
    `${ROUNDS} runs one after another; baseline: the bare 10 ms wait. Memory: retained heap per task with 10,000 tasks parked on input in one process. Idle: CPU of a started runtime on SQLite over 10 s.`,
  columns: ['measure', 'median ms', 'p99 ms', 'spread ms', 'ratio to bare 10 ms'],
  rows: [
    row('bare 10 ms wait (baseline)', bare),
    row('task on memory store', memory),
    row('task on SQLite store', onDisk),
    ['heap per parked task, memory store (bytes)', Math.round(heapMemory), '', '', ''],
    ['heap per parked task, SQLite store (bytes)', Math.round(heapSqlite), '', '', ''],
    ['idle CPU over 10 s, started runtime (ms)', idleMs, '', '', ''],
  ],
  goals: [
    {
      text: `a 10 ms task completes within 1.3× the bare wait (SQLite: ${(median(onDisk) / median(bare)).toFixed(2)}×)`,
      met: median(onDisk) / median(bare) <= 1.3,
    },
    {
      text: `≤ 1 KB retained heap per task kept in memory (${Math.round(heapMemory)} B)`,
      met: heapMemory <= 1024,
    },
    {
      text: `≤ 100 B retained heap per task on a durable store (${Math.round(heapSqlite)} B)`,
      met: heapSqlite <= 100,
    },
    { text: `idle CPU ≈ 0 (${idleMs.toFixed(1)} ms over 10 s)`, met: idleMs < 50 },
  ],
};
report(section);
