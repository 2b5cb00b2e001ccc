/**
 * Pickup on Postgres: one `serve --no-worker` replica and one `taskrail worker`; how long after
 * a task is created its handler starts on the worker (wall clocks of one machine). "After
 * create" runs from the create reply (the task row and its job committed together) to the
 * handler's start: graphile-worker's NOTIFY wake-up, its job fetch, the lease claim (one
 * durable commit, which at-most-once needs before the handler runs), reading the task. The
 * baseline, measured between the pickups on the same server, is one bare durable commit.
 * Needs TASKRAIL_POSTGRES_URL; a fresh schema, dropped after.
 */
import pg from 'pg';
import { checked, endpoint, MAIN, wire2026, pause, startServer } from './lib/http.js';
import {
  dropStoreSchema,
  exitUnlessPostgres,
  freshSchema,
  loadNow,
  loadRange,
  PG_BASE,
} from './lib/pg-bench.js';
import { wallNow } from './lib/pg-tools.js';
import { percentile, report } from './lib/stats.js';

const TITLE = 'Postgres: pickup after create';
const TOOLS = '.build/bench/lib/pg-tools.js';
const RUNS = 60;
const WARM_UP = 5;

exitUnlessPostgres(TITLE);
const { schema, url } = freshSchema();
const quiet = ['--tools', TOOLS, '--log-level', 'warn', '--store', url];

interface Samples {
  fromReply: number[];
  fromSend: number[];
  commit: number[];
  load: number[];
}

async function measure(): Promise<Samples> {
  const replica = await startServer(MAIN, ['serve', '--port', '0', '--no-worker', ...quiet]);
  const worker = await startServer(MAIN, ['worker', '--concurrency', '4', ...quiet], {}, /(ready)/);
  const ep = endpoint(replica.url);
  const db = new pg.Client({ connectionString: PG_BASE });
  await db.connect();
  await db.query(`CREATE TABLE "${schema}".commit_probe (id serial PRIMARY KEY, at float8)`);
  const samples: Samples = { fromReply: [], fromSend: [], commit: [], load: [] };
  try {
    for (let i = 0; i < RUNS + WARM_UP; i++) {
      const sent = wallNow();
      const created = await checked(
        ep,
        wire2026('tools/call', { name: 'started_at', arguments: {} }, true),
      );
      const replied = wallNow();
      const get = wire2026('tasks/get', { taskId: String(created['taskId']) }, true);
      let task = await checked(ep, get);
      while (task['status'] === 'working') {
        await pause(10); // polling hard would take CPU from what is measured
        task = await checked(ep, get);
      }
      const started = Number((task['result'] as { content: { text: string }[] }).content[0]?.text);
      const commitStarted = performance.now();
      await db.query(`INSERT INTO "${schema}".commit_probe (at) VALUES ($1)`, [started]);
      if (i < WARM_UP) continue;
      samples.commit.push(performance.now() - commitStarted);
      samples.fromReply.push(started - replied);
      samples.fromSend.push(started - sent);
      samples.load.push(loadNow());
    }
  } finally {
    ep.close();
    await db.end();
    await worker.stop();
    await replica.stop();
  }
  return samples;
}

const pq = (values: number[]) =>
  `${percentile(values, 50).toFixed(2)} / ${percentile(values, 95).toFixed(2)}`;

let samples: Samples;
try {
  samples = await measure();
} finally {
  await dropStoreSchema(schema);
}
const p50 = percentile(samples.fromReply, 50);
const commitP50 = percentile(samples.commit, 50);
const load = loadRange(samples.load);
report({
  title: TITLE,
  description:
    `${RUNS} tasks one at a time through a \`serve --no-worker\` replica to one \`taskrail worker ` +
    '--concurrency 4`; ms until the handler starts on the worker. Baseline: one INSERT committed ' +
    'to disk on the same server (synchronous_commit on), measured after each pickup. Every row ' +
    'notes the 1-minute load average of the shared 2-core machine while it was measured.',
  columns: [
    'measure',
    'ms p50 / p95',
    'baseline: one durable commit, ms p50 / p95',
    'ratio (p50)',
    'load',
  ],
  rows: [
    [
      'pickup after create (create reply → handler starts)',
      pq(samples.fromReply),
      pq(samples.commit),
      (p50 / commitP50).toFixed(2),
      load,
    ],
    [
      'pickup from sending tools/call (adds the create, itself a durable commit)',
      pq(samples.fromSend),
      pq(samples.commit),
      (percentile(samples.fromSend, 50) / commitP50).toFixed(2),
      load,
    ],
  ],
  goals: [
    { text: `pickup after create p50 ≤ 10 ms (${p50.toFixed(2)} ms, ${load})`, met: p50 <= 10 },
  ],
});
