/**
 * Store throughput: create / get / compareAndSet per second on the memory and SQLite stores,
 * next to raw better-sqlite3 statements on the same table shape, pragmas and file system,
 * measured in the same run. Run: `node .build/bench/stores.js` (prints one JSON line).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { TaskStore } from '../src/store/port.js';
import { MemoryTaskStore } from '../src/stores/memory/index.js';
import { TASK_COLUMNS } from '../src/stores/sqlite/rows.js';
import { MIGRATIONS } from '../src/stores/sqlite/schema.js';
import { SqliteTaskStore } from '../src/stores/sqlite/index.js';
import { newTaskId } from '../src/task/ids.js';
import { newTaskRecord, type TaskRecord } from '../src/task/record.js';
import { report as progress } from '../src/task/transitions.js';
import { median, report, spread, type Section } from './_stats.js';

const ROUNDS = 5;
const WRITES = 600;
const READS = 6000;

type Op = 'create' | 'get' | 'compareAndSet';
type Rates = Record<Op, number>;

function records(count: number): TaskRecord[] {
  const now = Date.now();
  return Array.from({ length: count }, (_, i) =>
    newTaskRecord(
      {
        id: newTaskId(),
        principal: 'bench',
        tool: 'slow_compute',
        arguments: { seconds: 1, label: `task ${i}` },
        ttlMs: 3_600_000,
        pollIntervalMs: 500,
        meta: { session: 'bench-session' },
      },
      now,
    ),
  );
}

/** Runs `op` over `items` and returns operations per second. */
async function rate<T>(items: T[], op: (item: T) => unknown): Promise<number> {
  const started = performance.now();
  for (const item of items) await op(item);
  return items.length / ((performance.now() - started) / 1000);
}

async function measureStore(store: TaskStore): Promise<Rates> {
  const tasks = records(WRITES);
  const create = await rate(tasks, (task) => store.create(task));
  const ids = Array.from({ length: READS }, (_, i) => (tasks[i % tasks.length] as TaskRecord).id);
  const get = await rate(ids, (id) => store.get(id));
  const nexts = tasks.map((task) => progress(task, 'half way', task.createdAt + 1));
  const compareAndSet = await rate(nexts, (next) => store.compareAndSet(next, next.revision - 1));
  await store.close();
  return { create, get, compareAndSet };
}

/** A record as the positional values of TASK_COLUMNS, serialized the obvious way. */
function values(t: TaskRecord): (string | number | null)[] {
  const json = (value: unknown) => (value === undefined ? null : JSON.stringify(value));
  return [
    t.id,
    t.principal,
    t.tool,
    t.status,
    t.statusMessage ?? null,
    t.createdAt,
    t.updatedAt,
    t.ttlMs,
    t.expiresAt,
    t.pollIntervalMs,
    t.revision,
    t.attempt,
    t.generation,
    t.idempotencyKey ?? null,
    JSON.stringify(t.arguments),
    json(t.result),
    json(t.error),
    JSON.stringify(t.inputRequests),
    JSON.stringify(t.inputResponses),
    JSON.stringify(t.meta),
  ];
}

/** The same operations written directly against better-sqlite3: the floor a store adds to. */
async function measureRaw(path: string): Promise<Rates> {
  const db = new Database(path);
  db.pragma('busy_timeout = 5000');
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(MIGRATIONS[0] as string);
  const columns = TASK_COLUMNS.split(', ');
  const insert = db.prepare(
    `INSERT INTO tasks (${TASK_COLUMNS}) VALUES (${columns.map(() => '?').join(', ')})`,
  );
  const select = db.prepare('SELECT * FROM tasks WHERE id = ?');
  const update = db.prepare(
    `UPDATE tasks SET ${columns
      .slice(1)
      .map((c) => `${c} = ?`)
      .join(', ')} ` + 'WHERE id = ? AND revision = ?',
  );
  const tasks = records(WRITES);
  const create = await rate(tasks, (t) => insert.run(...values(t)));
  const ids = Array.from({ length: READS }, (_, i) => (tasks[i % tasks.length] as TaskRecord).id);
  const get = await rate(ids, (id) => select.get(id));
  const nexts = tasks.map((task) => progress(task, 'half way', task.createdAt + 1));
  const compareAndSet = await rate(nexts, (t) =>
    update.run(...values(t).slice(1), t.id, t.revision - 1),
  );
  db.close();
  return { create, get, compareAndSet };
}

function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

const dir = mkdtempSync(join(tmpdir(), 'taskrail-bench-stores-'));
const samples: Record<'memory' | 'sqlite' | 'raw', Rates[]> = { memory: [], sqlite: [], raw: [] };
try {
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate the order so neither side always runs on a warmer process.
    const sides = round % 2 === 0 ? (['sqlite', 'raw'] as const) : (['raw', 'sqlite'] as const);
    for (const side of sides) {
      collectGarbage();
      const path = join(dir, `${side}-${round}.db`);
      samples[side].push(
        side === 'raw' ? await measureRaw(path) : await measureStore(new SqliteTaskStore(path)),
      );
    }
    collectGarbage();
    samples.memory.push(await measureStore(new MemoryTaskStore()));
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const OPS: Op[] = ['create', 'get', 'compareAndSet'];
const of = (side: keyof typeof samples, op: Op) => samples[side].map((rates) => rates[op]);
const ratio = (op: Op) => median(of('sqlite', op)) / median(of('raw', op));
const rows = OPS.flatMap((op) =>
  (['raw', 'sqlite', 'memory'] as const).map((side) => [
    op,
    side === 'raw' ? 'raw better-sqlite3 (baseline)' : `${side} store`,
    Math.round(median(of(side, op))),
    spread(of(side, op), 0),
    side === 'memory' ? '' : median(of(side, op)) / median(of('raw', op)),
  ]),
);
const section: Section = {
  title: 'Stores: create, get, compareAndSet throughput',
  description:
    `Operations per second, one after another, ${ROUNDS} rounds of ${WRITES} creates, ` +
    `${READS} point gets and ${WRITES} compare-and-sets. Baseline: raw better-sqlite3 on the ` +
    'same table, indexes, pragmas (WAL, synchronous NORMAL) and file system: an autocommit ' +
    'INSERT of the serialized record, a `SELECT *` by id without JSON parsing, and an UPDATE ' +
    'of every column by id and revision. The SQLite store adds to these its transaction, idempotency and ' +
    'expiry checks, JSON (de)serialization and copies.',
  columns: ['operation', 'implementation', 'median ops/s', 'spread ops/s', 'ratio store/raw'],
  rows,
  goals: (['create', 'get'] as const).map((op) => ({
    text: `SQLite store ${op} ≥ 50% of raw better-sqlite3 (${(ratio(op) * 100).toFixed(0)}%)`,
    met: ratio(op) >= 0.5,
  })),
};
report(section);
