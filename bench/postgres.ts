/**
 * Postgres store throughput: create and get per second through `PostgresTaskStore`, next to raw
 * node-postgres INSERT / SELECT of the same record as one JSON text in a plain table, measured
 * in the same run against the same server. Needs TASKRAIL_POSTGRES_URL. Run:
 * `node .build/bench/postgres.js` (prints one JSON line). Uses fresh schemas, dropped after.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openPostgresStore } from '../src/stores/postgres/index.js';
import type { TaskRecord } from '../src/task/record.js';
import { report, type Section } from './lib/stats.js';
import {
  compareThroughput,
  storeRatio,
  storeTarget,
  throughputRows,
  type Mode,
  type Op,
  type Plan,
  type Target,
} from './lib/store-throughput.js';

const TITLE = 'Postgres store: create and get throughput';
const ROUNDS = 3;
const WRITES = 500;
const READS = 1500;
const IN_FLIGHT = 10;
const PLAN: Plan = { rounds: ROUNDS, writes: WRITES, reads: READS, inFlight: IN_FLIGHT };

/**
 * The floor: one INSERT of the record's JSON per create, one SELECT + JSON.parse per read, as
 * prepared statements like the store's.
 */
function rawTarget(pool: pg.Pool, table: string): Target {
  return {
    create: (task) =>
      pool.query({
        name: 'raw_insert',
        text: `INSERT INTO ${table} (id, body) VALUES ($1, $2)`,
        values: [task.id, JSON.stringify(task)],
      }),
    get: async (id) => {
      const { rows } = await pool.query<{ body: string }>({
        name: 'raw_select',
        text: `SELECT body FROM ${table} WHERE id = $1`,
        values: [id],
      });
      return rows[0] === undefined ? undefined : (JSON.parse(rows[0].body) as TaskRecord);
    },
  };
}

async function main(base: string): Promise<Section> {
  const schema = `trbench_${randomBytes(4).toString('hex')}`;
  const url = new URL(base);
  url.searchParams.set('schema', schema);
  const store = await openPostgresStore(url.toString());
  const pool = new pg.Pool({ connectionString: base, max: 10 });
  const table = `"${schema}".raw`;
  await pool.query(`CREATE TABLE ${table} (id text PRIMARY KEY, body text NOT NULL)`);
  let samples: Record<string, number[]>;
  try {
    samples = await compareThroughput(PLAN, storeTarget(store), rawTarget(pool, table));
  } finally {
    await store.close();
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  }
  const ratio = (mode: Mode, op: Op) => storeRatio(samples, mode, op);
  const rows = throughputRows(PLAN, samples, {
    raw: 'raw pg INSERT/SELECT (baseline)',
    store: 'postgres store',
  });
  return {
    title: TITLE,
    description:
      `Operations per second against ${url.host}, ${ROUNDS} rounds of ${WRITES} creates and ` +
      `${READS} gets, one at a time and ${IN_FLIGHT} in flight (pool of 10 on both sides). ` +
      'Baseline: raw node-postgres INSERT of the record as one JSON text into a table with only a ' +
      'primary key / SELECT + JSON.parse. A store create is one statement (row with its indexes, ' +
      'optional lease, NOTIFY); a get is one SELECT judged against the database clock.',
    columns: ['operation', 'implementation', 'ops/s (median)', 'spread', 'ratio to raw'],
    rows,
    goals: [
      {
        text: 'store create at least 1/2 of raw INSERT, one at a time',
        met: ratio('sequential', 'create') >= 0.5,
      },
      {
        text: 'store get at least 1/2 of raw SELECT, one at a time',
        met: ratio('sequential', 'get') >= 0.5,
      },
    ],
  };
}

const base = process.env['TASKRAIL_POSTGRES_URL'];
if (base === undefined || base === '') {
  report({
    title: TITLE,
    description:
      'Skipped: TASKRAIL_POSTGRES_URL is not set (e.g. postgres://postgres@127.0.0.1:5432/test).',
    columns: [],
    rows: [],
    goals: [],
  });
} else {
  report(await main(base));
}
