/**
 * What an idle `taskrail serve` costs, on every store: its CPU (all threads, schedstat) over
 * 10 s at rest after start, and again after a few tasks (timers, polls and threads that work
 * left running). Baseline: a bare node:http server, idle, measured alike. Prints one JSON line
 * (see scripts/bench.mjs).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checked, endpoint, pause, serveBench, startServer, wire2026 } from './lib/http.js';
import type { ChildServer } from './lib/http.js';
import { processCpuNs } from './lib/load.js';
import { dropStoreSchema, freshSchema } from './lib/pg-bench.js';
import { Redis } from 'ioredis';
import { report } from './lib/stats.js';

const WINDOW_MS = 10_000;
/** Start-up work (module loading, lazy compilation) is over by then. */
const SETTLE_MS = 15_000;
/** After the tasks, before the window: a run's own tail (its commit, its events) is over. */
const AFTER_WORK_MS = 5_000;
const TASKS = 5;
const GOAL_MS = 20;

function wakeUps(pid: number): number {
  let total = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      const status = readFileSync(`/proc/${pid}/task/${task}/status`, 'utf8');
      total += Number(/\nvoluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0);
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return total;
}

interface Window {
  cpuMs: number;
  wakeUps: number;
}

async function idleWindow(pid: number): Promise<Window> {
  const cpu0 = processCpuNs(pid);
  const wake0 = wakeUps(pid);
  await pause(WINDOW_MS);
  return { cpuMs: (processCpuNs(pid) - cpu0) / 1e6, wakeUps: wakeUps(pid) - wake0 };
}

interface Windows {
  /** 15–25 s after start: V8's memory reducer shrinks the start-up heap here, once. */
  tail: Window;
  /** 25–35 s after start. */
  rest: Window;
  after?: Window;
  next?: Window;
}

async function measure(server: ChildServer, work: boolean): Promise<Windows> {
  const pid = server.process.pid as number;
  await pause(SETTLE_MS);
  const tail = await idleWindow(pid);
  const rest = await idleWindow(pid);
  if (!work) return { tail, rest };
  const ep = endpoint(server.url);
  const noop = wire2026('tools/call', { name: 'noop', arguments: {} }, true);
  for (let i = 0; i < TASKS; i += 1) await checked(ep, noop);
  ep.close();
  await pause(AFTER_WORK_MS);
  const after = await idleWindow(pid);
  // The next 10 s: what recurs shows in both windows, a one-off tail of the work (V8's memory
  // reducer collects a few seconds after allocation stops) only in the first.
  return { tail, rest, after, next: await idleWindow(pid) };
}

const dir = mkdtempSync(join(tmpdir(), 'taskrail-bench-idle-'));
const redis = process.env['TASKRAIL_REDIS_URL'];
const postgres = process.env['TASKRAIL_POSTGRES_URL'];
const prefix = `trbench_idle_${process.pid}`;
const pgSchema = postgres === undefined ? undefined : freshSchema();
const stores: [string, string][] = [['SQLite', `sqlite:${join(dir, 'tasks.db')}`]];
if (redis !== undefined) stores.push(['Redis + BullMQ', `${redis}?prefix=${prefix}`]);
if (pgSchema !== undefined) stores.push(['PostgreSQL + graphile-worker', pgSchema.url]);

/** What the Redis and PostgreSQL stores wrote, deleted (their keys, their schemas). */
async function cleanUp(): Promise<void> {
  if (pgSchema !== undefined) await dropStoreSchema(pgSchema.schema);
  if (redis === undefined) return;
  const client = new Redis(redis);
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await client.unlink(...keys);
  } while (cursor !== '0');
  client.disconnect();
}

const bareScript = join(dir, 'bare.mjs');
writeFileSync(
  bareScript,
  "import { createServer } from 'node:http';\n" +
    "const s = createServer((q, r) => r.end('{}')).listen(0, '127.0.0.1', () =>\n" +
    '  console.log(`http://127.0.0.1:${s.address().port}/mcp`));\n',
);
const bare = await startServer(bareScript, []);
const { tail: bareTail, rest: bareRest } = await measure(bare, false);
await bare.stop();

const rows: (string | number)[][] = [];
const goals: { text: string; met: boolean }[] = [];
const cell = (w: Window) => `${w.cpuMs.toFixed(1)} ms, ${w.wakeUps} wake-ups`;
const share = (w: Window) => `${((w.cpuMs / WINDOW_MS) * 100).toFixed(2)}%`;
rows.push([
  'bare node:http server (baseline)',
  cell(bareTail),
  cell(bareRest),
  share(bareRest),
  '',
  '',
  '',
]);
for (const [name, store] of stores) {
  const server = await serveBench(store);
  const { tail, rest, after, next } = await measure(server, true);
  await server.stop();
  const a = after as Window;
  const n = next as Window;
  rows.push([`serve on ${name}`, cell(tail), cell(rest), share(rest), cell(a), share(a), cell(n)]);
  const worst = Math.max(rest.cpuMs, a.cpuMs);
  goals.push({
    met: worst <= GOAL_MS,
    text: `idle serve on ${name} ≤ ${GOAL_MS} ms of CPU per 10 s (0.2% of a core) at rest and after work (${rest.cpuMs.toFixed(1)} and ${a.cpuMs.toFixed(1)} ms; bare node:http ${bareRest.cpuMs.toFixed(1)} ms; the start-up tail before it, not judged: ${tail.cpuMs.toFixed(1)} ms)`,
  });
}
rmSync(dir, { recursive: true, force: true });
await cleanUp();

report({
  title: 'Idle cost of serve on each store, before and after work',
  description:
    `\`taskrail serve\` (a child process, the bench tools, default options) on each store: its CPU over ${WINDOW_MS / 1000} s, all threads summed (schedstat), and its voluntary context switches (wake-ups). ` +
    `First the start-up tail, ${SETTLE_MS / 1000}–${(SETTLE_MS + WINDOW_MS) / 1000} s after start: V8's memory reducer gives back the heap start-up grew, in two or three collections about 16 s after start (seen with \`--trace-gc\` as \`Mark-Compact (reduce)\`), once per process; it is reported, not judged. ` +
    `Then at rest, the next ${WINDOW_MS / 1000} s; then again ${AFTER_WORK_MS / 1000} s after ${TASKS} no-op tasks were created and run (the timers, polls and threads work leaves running), and in the ${WINDOW_MS / 1000} s after that (what recurs shows in both after-work windows; a one-off tail of the work only in the first). ` +
    'Baseline: a bare node:http server idle, measured alike. Redis and PostgreSQL are skipped without TASKRAIL_REDIS_URL / TASKRAIL_POSTGRES_URL.',
  columns: [
    'process',
    'start-up tail, 15–25 s: CPU',
    'at rest, 25–35 s: CPU in 10 s',
    'share of a core',
    'after work: CPU in 10 s',
    'share of a core',
    'the next 10 s',
  ],
  rows,
  goals,
});
