/**
 * `tasks/get` over HTTP with 1,000 vs 10,000,000 stored tasks on SQLite, and the disk bytes a
 * stored small task costs: two `taskrail serve` children, one per file, asked in alternation
 * (one request to each in turn, so both see the same moment of the machine's load).
 */
import { closeSync, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { endpoint, serveBench, wire2026, type Endpoint } from './lib/http.js';
import { cachedFill, fillSqlite, sampleIds } from './lib/sqlite-fill.js';
import { median, percentile, report, spread, type Section } from './lib/stats.js';

const SMALL = 1_000;
const LARGE = 10_000_000;
const ROUNDS = 9;
const GETS = 400;
const SAMPLE = ROUNDS * GETS;
const GOAL = 1.2;
const dir = mkdtempSync(join(tmpdir(), 'taskrail-bench-10m-'));

const small = await fillSqlite(join(dir, 'small.db'), SMALL);
const large = await cachedFill(LARGE);

/**
 * Reads a file once, front to back, so the OS holds it in its page cache as a server that has
 * run a while holds its working set; the small file is there anyway. Returns the seconds taken.
 */
function warmPageCache(path: string): number {
  const started = performance.now();
  const chunk = Buffer.allocUnsafe(4 * 1024 * 1024);
  const fd = openSync(path, 'r');
  try {
    while (readSync(fd, chunk, 0, chunk.length, null) > 0);
  } finally {
    closeSync(fd);
  }
  return (performance.now() - started) / 1000;
}
const warmSeconds = warmPageCache(large.path);
const ids = {
  small: sampleIds(small.path, SMALL, SAMPLE),
  large: sampleIds(large.path, LARGE, SAMPLE),
};

const serve = (path: string) => serveBench(`sqlite:${path}`);
const servers = { small: await serve(small.path), large: await serve(large.path) };
const ep = { small: endpoint(servers.small.url), large: endpoint(servers.large.url) };

/** One tasks/get, timed; a reply that is not this task's fails the run. */
async function timedGet(target: Endpoint, taskId: string): Promise<number> {
  const started = performance.now();
  const reply = await target.post(wire2026('tasks/get', { taskId }, true));
  const ms = performance.now() - started;
  if (reply.status !== 200 || !reply.body.includes(`"taskId":"${taskId}"`)) {
    throw new Error(`tasks/get ${taskId}: HTTP ${reply.status} ${reply.body.slice(0, 200)}`);
  }
  return ms;
}

for (let i = 0; i < 300; i += 1) {
  await timedGet(ep.small, ids.small[i % ids.small.length] as string);
  await timedGet(ep.large, ids.large[i % ids.large.length] as string);
}
const all = { small: [] as number[], large: [] as number[] };
const perRound = { small: [] as number[], large: [] as number[] };
let next = 0; // each large id is read once: its pages are not kept hot by earlier reads
for (let round = 0; round < ROUNDS; round += 1) {
  const these = { small: [] as number[], large: [] as number[] };
  for (let i = 0; i < GETS; i += 1, next += 1) {
    const order = i % 2 === 0 ? (['small', 'large'] as const) : (['large', 'small'] as const);
    for (const which of order) {
      const pool = ids[which];
      these[which].push(await timedGet(ep[which], pool[next % pool.length] as string));
    }
  }
  for (const which of ['small', 'large'] as const) {
    perRound[which].push(median(these[which]));
    all[which].push(...these[which]);
  }
}
for (const e of Object.values(ep)) e.close();
await Promise.all(Object.values(servers).map((s) => s.stop()));
rmSync(dir, { recursive: true, force: true });

const ratios = perRound.large.map((value, i) => value / (perRound.small[i] as number));
const ratio = median(ratios);
const row = (name: string, values: number[], samples: number[], bytes: number) => [
  name,
  `${median(values).toFixed(3)} (${spread(values, 3)})`,
  percentile(samples, 99).toFixed(3),
  bytes.toFixed(0),
];
const section: Section = {
  title: 'HTTP: tasks/get with 1,000 vs 10,000,000 stored tasks (SQLite), and disk bytes per task',
  description:
    `Two \`taskrail serve\` children, one on a file of ${SMALL.toLocaleString('en')} completed tasks and one of ${LARGE.toLocaleString('en')} (${large.reused ? 'filled by an earlier run and reused: its schema version and row count checked' : `filled in ${large.seconds.toFixed(0)} s`} by one INSERT … SELECT in SQLite, secondary indexes rebuilt after the load; ids are random, so the primary-key index is built as a real store's is). ` +
    `${ROUNDS} rounds of ${GETS} sequential tasks/get over keep-alive HTTP to each server in alternation, of ids picked at random over the whole table; on the large file no id is read twice, so the reads do not keep their own B-tree pages hot. Before the rounds the large file is read once front to back (${warmSeconds.toFixed(1)} s), so both files sit in the OS page cache, as a server's working set does once it has run a while with the RAM for it: the goal is about the deeper B-tree, not the disk; SQLite's own page cache (2 MiB by default) holds a small part of the large file either way. ` +
    'Disk bytes: the database file after a full checkpoint, divided by its rows (a small completed task: a short argument object and a one-line text result, all indexes included). ' +
    `Fails if a random read in the large table costs more than ${GOAL}× one in the small.`,
  columns: [
    'stored tasks',
    'median ms per tasks/get (min–max of rounds)',
    'p99 ms',
    'disk bytes per task',
  ],
  rows: [
    row(SMALL.toLocaleString('en'), perRound.small, all.small, small.bytesPerTask),
    row(LARGE.toLocaleString('en'), perRound.large, all.large, large.bytesPerTask),
    [
      `ratio ${LARGE.toLocaleString('en')} / ${SMALL.toLocaleString('en')}`,
      `${ratio.toFixed(2)}× (${spread(ratios)})`,
      '',
      '',
    ],
  ],
  goals: [
    {
      text: `tasks/get with ${LARGE.toLocaleString('en')} stored tasks within 20% of ${SMALL.toLocaleString('en')} (${ratio.toFixed(2)}×)`,
      met: ratio <= GOAL,
    },
  ],
};
report(section);
process.exit(0);
