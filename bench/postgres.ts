/**
 * Postgres store throughput: create and get per second through `PostgresTaskStore`, next to raw
 * node-postgres INSERT / SELECT of the same record as one JSON text in a plain table, measured
 * in the same run against the same server. Needs TASKRAIL_POSTGRES_URL. Run:
 * `node .build/bench/postgres.js` (prints one JSON line). Uses fresh schemas, dropped after.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { TaskStore } from '../src/store/port.js';
import { openPostgresStore } from '../src/stores/postgres/index.js';
import type { TaskRecord } from '../src/task/record.js';
import { benchRecords } from './_records.js';
import { median, report, spread, type Section } from './_stats.js';

const TITLE = 'Postgres store: create and get throughput';
const ROUNDS = 3;
const WRITES = 500;
const READS = 1500;
const IN_FLIGHT = 10;

type Op = 'create' | 'get';
type Mode = 'sequential' | 'concurrent';
interface Target {
  create(task: TaskRecord): Promise<unknown>;
  get(id: string): Promise<unknown>;
}

function storeTarget(store: TaskStore): Target {
  return { create: (task) => store.create(task), get: (id) => store.get(id) };
}

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

async function rate<T>(items: T[], mode: Mode, op: (item: T) => Promise<unknown>): Promise<number> {
  const started = performance.now();
  if (mode === 'sequential') {
    for (const item of items) await op(item);
  } else {
    let next = 0;
    const lane = async () => {
      while (next < items.length) await op(items[next++] as T);
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  }
  return items.length / ((performance.now() - started) / 1000);
}

async function measure(target: Target, mode: Mode): Promise<Record<Op, number>> {
  const tasks = benchRecords(WRITES);
  const create = await rate(tasks, mode, (task) => target.create(task));
  const ids = Array.from({ length: READS }, (_, i) => (tasks[i % WRITES] as TaskRecord).id);
  const get = await rate(ids, mode, (id) => target.get(id));
  return { create, get };
}

async function main(base: string): Promise<Section> {
  const schema = `trbench_${randomBytes(4).toString('hex')}`;
  const url = new URL(base);
  url.searchParams.set('schema', schema);
  const store = await openPostgresStore(url.toString());
  const pool = new pg.Pool({ connectionString: base, max: 10 });
  const table = `"${schema}".raw`;
  await pool.query(`CREATE TABLE ${table} (id text PRIMARY KEY, body text NOT NULL)`);
  const samples: Record<string, number[]> = {};
  const add = (key: string, value: number) => (samples[key] ??= []).push(value);
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const mode of ['sequential', 'concurrent'] as const) {
        const sides = [
          ['store', storeTarget(store)],
          ['raw', rawTarget(pool, table)],
        ] as const;
        for (const [side, target] of round % 2 === 0 ? sides : [...sides].reverse()) {
          const rates = await measure(target, mode);
          add(`${mode} create ${side}`, rates.create);
          add(`${mode} get ${side}`, rates.get);
        }
      }
    }
  } finally {
    await store.close();
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  }
  const of = (key: string) => samples[key] ?? [0];
  const ratio = (mode: Mode, op: Op) =>
    median(of(`${mode} ${op} store`)) / median(of(`${mode} ${op} raw`));
  const rows = (['sequential', 'concurrent'] as const).flatMap((mode) =>
    (['create', 'get'] as const).flatMap((op) =>
      (['raw', 'store'] as const).map((side) => [
        `${op} (${mode === 'sequential' ? 'one at a time' : `${IN_FLIGHT} in flight`})`,
        side === 'raw' ? 'raw pg INSERT/SELECT (baseline)' : 'postgres store',
        Math.round(median(of(`${mode} ${op} ${side}`))),
        spread(of(`${mode} ${op} ${side}`), 0),
        side === 'raw' ? 1 : ratio(mode, op),
      ]),
    ),
  );
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
