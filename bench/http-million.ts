/**
 * `tasks/get` over HTTP with 1,000 vs 1,000,000 stored tasks on SQLite: two `taskrail serve`
 * children, one per file, measured in interleaved rounds. The rows are written straight into
 * the store's own schema with one prepared statement in one transaction (seconds, not minutes).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteTaskStore } from '../src/stores/sqlite/index.js';
import { recordToParams, TASK_PARAMS, TASK_COLUMNS } from '../src/stores/sqlite/rows.js';
import { newTaskId } from '../src/task/ids.js';
import { newTaskRecord, type TaskRecord } from '../src/task/record.js';
import * as t from '../src/task/transitions.js';
import {
  BENCH_TOOLS,
  endpoint,
  latencies,
  MAIN,
  modern,
  ratio,
  rounds,
  startServer,
} from './_http.js';
import { sender } from './_peers.js';
import { median, percentile, report, spread, type Section } from './_stats.js';

const ROUNDS = 5;
const GETS = 300;
const dir = mkdtempSync(join(tmpdir(), 'taskrail-bench-million-'));

function completedTask(i: number, now: number): TaskRecord {
  const task = newTaskRecord(
    {
      id: newTaskId(),
      principal: 'anonymous',
      tool: 'noop',
      arguments: { i },
      ttlMs: 86_400_000,
      pollIntervalMs: 1,
      generation: 'v2',
    },
    now - 1000 + i / 1000,
  );
  return t.complete(task, { content: [{ type: 'text', text: `task ${i}` }] }, now);
}

/**
 * A SQLite file with `count` completed tasks; returns about `sample` of their ids, each row
 * picked with the same chance wherever it lies in the table, in random order.
 */
async function fill(count: number, sample: number): Promise<{ path: string; ids: string[] }> {
  const path = join(dir, `tasks-${count}.db`);
  await new SqliteTaskStore(path).close(); // the store's schema and pragmas
  const db = new Database(path);
  const insert = db.prepare(`INSERT INTO tasks (${TASK_COLUMNS}) VALUES (${TASK_PARAMS})`);
  const ids: string[] = [];
  const chance = Math.min(1, sample / count);
  const now = Date.now();
  db.transaction(() => {
    for (let i = 0; i < count; i += 1) {
      const task = completedTask(i, now);
      if (Math.random() < chance) ids.push(task.id);
      insert.run(recordToParams(task));
    }
  })();
  db.close();
  return { path, ids: shuffled(ids) };
}

function shuffled<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i -= 1) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}

const SAMPLE = 20_000;
const filledAt = performance.now();
const small = await fill(1_000, SAMPLE);
const large = await fill(1_000_000, SAMPLE);
const fillSeconds = (performance.now() - filledAt) / 1000;

const serve = (path: string) =>
  startServer(MAIN, [
    'serve',
    '--port',
    '0',
    '--tools',
    BENCH_TOOLS,
    '--log-level',
    'warn',
    '--store',
    `sqlite:${path}`,
  ]);
const servers = { small: await serve(small.path), large: await serve(large.path) };
const ep = { small: endpoint(servers.small.url), large: endpoint(servers.large.url) };

/** Sequential tasks/get of random stored tasks; on the large table no id is read twice. */
function getter(which: 'small' | 'large', ids: string[]) {
  let next = 0;
  const calls = ids.map((taskId) => sender(ep[which], modern('tasks/get', { taskId }, true)));
  return () => (calls[next++ % calls.length] as () => Promise<void>)();
}
const get = { small: getter('small', small.ids), large: getter('large', large.ids) };
for (const warm of Object.values(get)) await latencies(warm, 500);
const samples = { small: [] as number[], large: [] as number[] };
const per = await rounds(ROUNDS, {
  small: async () => {
    const s = await latencies(get.small, GETS);
    samples.small.push(...s);
    return median(s);
  },
  large: async () => {
    const s = await latencies(get.large, GETS);
    samples.large.push(...s);
    return median(s);
  },
});
for (const e of Object.values(ep)) e.close();
await Promise.all(Object.values(servers).map((s) => s.stop()));
rmSync(dir, { recursive: true, force: true });

const r = ratio(per.large, per.small);
const row = (name: string, values: number[], all: number[]) => [
  name,
  `${median(values).toFixed(3)} (${spread(values, 3)})`,
  percentile(all, 99).toFixed(3),
];
const section: Section = {
  title: 'HTTP: tasks/get with 1,000 vs 1,000,000 stored tasks (SQLite)',
  description:
    `Two \`taskrail serve\` children, one on a file with 1,000 completed tasks and one with 1,000,000 (filled in ${fillSeconds.toFixed(0)} s by one prepared INSERT in one transaction). ` +
    `${ROUNDS} interleaved rounds of ${GETS} sequential tasks/get over keep-alive HTTP, of ids picked at random over the whole table (on the large one about ${SAMPLE.toLocaleString('en')} distinct ids, none read twice, so the B-tree pages are not kept hot by the reads themselves; the OS page cache is not dropped, which would need root). ` +
    'Fails if a random read in the large table costs more than 1.2× one in the small.',
  columns: ['stored tasks', 'median ms per tasks/get (min–max of rounds)', 'p99 ms'],
  rows: [
    row('1,000', per.small, samples.small),
    row('1,000,000', per.large, samples.large),
    ['ratio 1,000,000 / 1,000', `${r.median.toFixed(2)}× (${r.spread})`, ''],
  ],
  goals: [
    {
      text: `tasks/get with 1,000,000 stored tasks within 20% of 1,000 (${r.median.toFixed(2)}×)`,
      met: r.median <= 1.2,
    },
  ],
};
report(section);
process.exit(0);
