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
import { storedWire } from '../src/stores/shared/record-parts.js';
import { TASK_COLUMNS } from '../src/stores/sqlite/rows.js';
import { MIGRATIONS } from '../src/stores/sqlite/schema.js';
import { SqliteTaskStore } from '../src/stores/sqlite/index.js';
import { report as progress } from '../src/task/transitions.js';
import type { TaskRecord } from '../src/task/record.js';
import { benchRecords } from './lib/records.js';
import { median, report, spread, type Section } from './lib/stats.js';

const ROUNDS = 5;
const WRITES = 500;
const READS = 4000;

type Op = 'create' | 'get' | 'compareAndSet';
type Rates = Record<Op, number>;

/** The three measured operations of one implementation. */
interface Target {
  create(task: TaskRecord): unknown;
  get(id: string): unknown;
  compareAndSet(next: TaskRecord): unknown;
  close(): unknown;
}

function storeTarget(store: TaskStore): Target {
  return {
    create: (task) => store.create(task),
    get: (id) => store.get(id),
    compareAndSet: (next) => store.compareAndSet(next, next.revision - 1),
    close: () => store.close(),
  };
}

const CHUNK = 50;

/**
 * Runs `op` of every target over the same items in alternating chunks of CHUNK, so all targets
 * see the same machine load; returns each target's operations per second.
 */
async function interleaved<T>(
  targets: Target[],
  items: (target: number) => T[],
  op: (target: Target, item: T) => unknown,
): Promise<number[]> {
  const lists = targets.map((_, i) => items(i));
  const elapsed = targets.map(() => 0);
  const length = lists[0]?.length ?? 0;
  for (let from = 0; from < length; from += CHUNK) {
    for (const [i, target] of targets.entries()) {
      const started = performance.now();
      for (const item of (lists[i] as T[]).slice(from, from + CHUNK)) await op(target, item);
      elapsed[i] = (elapsed[i] as number) + performance.now() - started;
    }
  }
  return elapsed.map((ms) => length / (ms / 1000));
}

async function measure(targets: Target[]): Promise<Rates[]> {
  const tasks = targets.map(() => benchRecords(WRITES));
  const byTarget =
    <T>(map: (task: TaskRecord, i: number) => T) =>
    (target: number) =>
      (tasks[target] as TaskRecord[]).map(map);
  const create = await interleaved(
    targets,
    byTarget((task) => task),
    (t, task) => t.create(task),
  );
  const reads = (target: number) =>
    Array.from({ length: READS }, (_, i) => (tasks[target] as TaskRecord[])[i % WRITES]?.id);
  const get = await interleaved(targets, reads, (t, id) => t.get(id as string));
  const nexts = byTarget((task) => progress(task, 'half way', task.createdAt + 1));
  const compareAndSet = await interleaved(targets, nexts, (t, next) => t.compareAndSet(next));
  for (const target of targets) await target.close();
  return targets.map((_, i) => ({
    create: create[i] as number,
    get: get[i] as number,
    compareAndSet: compareAndSet[i] as number,
  }));
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
    storedWire(t.wire),
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
function rawTarget(path: string): Target {
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
  const assignments = columns.slice(1).map((column) => `${column} = ?`);
  const update = db.prepare(
    `UPDATE tasks SET ${assignments.join(', ')} WHERE id = ? AND revision = ?`,
  );
  return {
    create: (t) => insert.run(...values(t)),
    get: (id) => select.get(id),
    compareAndSet: (t) => update.run(...values(t).slice(1), t.id, t.revision - 1),
    close: () => db.close(),
  };
}

function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

const dir = mkdtempSync(join(tmpdir(), 'taskrail-bench-stores-'));
const samples: Record<'memory' | 'sqlite' | 'raw', Rates[]> = { memory: [], sqlite: [], raw: [] };
try {
  for (let round = 0; round < ROUNDS; round++) {
    collectGarbage();
    const store = storeTarget(new SqliteTaskStore(join(dir, `store-${round}.db`)));
    const raw = rawTarget(join(dir, `raw-${round}.db`));
    // Alternate which side leads each chunk, so neither always runs on a warmer cache.
    const pair = round % 2 === 0 ? [store, raw] : [raw, store];
    const [first, second] = await measure(pair);
    samples.sqlite.push((round % 2 === 0 ? first : second) as Rates);
    samples.raw.push((round % 2 === 0 ? second : first) as Rates);
    collectGarbage();
    samples.memory.push((await measure([storeTarget(new MemoryTaskStore())]))[0] as Rates);
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
    'same table, indexes, pragmas (WAL, synchronous NORMAL) and file system, run in ' +
    `alternating chunks of ${CHUNK} with the store so both see the same load: an autocommit ` +
    'INSERT of the serialized record, a `SELECT *` by id without JSON parsing, and an UPDATE ' +
    'of every column by id and revision. The SQLite store adds to these its transactions, ' +
    'idempotency and expiry checks, JSON (de)serialization and copies.',
  columns: ['operation', 'implementation', 'median ops/s', 'spread ops/s', 'ratio store/raw'],
  rows,
  goals: (['create', 'get'] as const).map((op) => ({
    text: `SQLite store ${op} ≥ 50% of raw better-sqlite3 (${(ratio(op) * 100).toFixed(0)}%)`,
    met: ratio(op) >= 0.5,
  })),
};
report(section);
