/**
 * The per-principal cap's cost in the creating write: store creates per second with
 * `maxUnfinished` (the default cap, 10,000) against the same creates without it, on Redis and
 * PostgreSQL (SQLite beside them), the same store, load and principals, in interleaved rounds.
 * Needs TASKRAIL_REDIS_URL and TASKRAIL_POSTGRES_URL (a store without its URL is left out).
 * Prints one JSON line (see scripts/bench.mjs). Fresh key prefixes and schemas, removed after.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CreateOptions, TaskStore } from '../src/store/port.js';
import { openStore } from '../src/stores/open.js';
import { newTaskId } from '../src/task/ids.js';
import { newTaskRecord } from '../src/task/record.js';
import { deleteRedisKeys } from '../test/helpers/redis-keys.js';
import { dropStoreSchema, freshSchema, PG_BASE } from './lib/pg-bench.js';
import { median, report, spread } from './lib/stats.js';

const ROUNDS = 7;
const CREATES = 3000;
const IN_FLIGHT = 32;
const PRINCIPALS = 8;
const CAP = 10_000;

type Side = 'on' | 'off';
const OPTIONS: Record<Side, CreateOptions> = { on: { maxUnfinished: CAP }, off: {} };

interface Opened {
  name: string;
  store: TaskStore;
  remove(): Promise<void>;
}

async function openRedis(base: string): Promise<Opened> {
  const url = new URL(base);
  const prefix = `trbench-cap-${randomBytes(4).toString('hex')}`;
  url.searchParams.set('prefix', prefix);
  const store = await openStore(url.toString());
  return { name: 'Redis', store, remove: async () => void (await deleteRedisKeys(base, prefix)) };
}

async function openPostgres(): Promise<Opened> {
  const { schema, url } = freshSchema();
  const store = await openStore(url);
  return { name: 'PostgreSQL', store, remove: () => dropStoreSchema(schema) };
}

async function openSqlite(): Promise<Opened> {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-bench-cap-'));
  const store = await openStore(`sqlite:${join(dir, 'tasks.db')}`);
  return { name: 'SQLite', store, remove: async () => rmSync(dir, { recursive: true }) };
}

/** CREATES unfinished tasks, IN_FLIGHT at once, principals in turn (each side its own). */
async function createsPerSecond(store: TaskStore, side: Side): Promise<number> {
  let next = 0;
  const worker = async () => {
    while (next < CREATES) {
      const i = next++;
      const principal = `${side}-principal-${i % PRINCIPALS}`;
      const record = newTaskRecord(
        {
          id: newTaskId(),
          principal,
          tool: 'noop',
          arguments: {},
          ttlMs: 3_600_000,
          pollIntervalMs: 1000,
        },
        Date.now(),
      );
      await store.create(record, OPTIONS[side]);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return CREATES / ((performance.now() - started) / 1000);
}

interface Measured {
  name: string;
  on: number[];
  off: number[];
  ratios: number[];
}

async function measure(opened: Opened): Promise<Measured> {
  const m: Measured = { name: opened.name, on: [], off: [], ratios: [] };
  try {
    await createsPerSecond(opened.store, 'on'); // warm-up, unmeasured
    await createsPerSecond(opened.store, 'off');
    for (let round = 0; round < ROUNDS; round++) {
      const order: Side[] = round % 2 === 0 ? ['on', 'off'] : ['off', 'on'];
      const got: Partial<Record<Side, number>> = {};
      for (const side of order) got[side] = await createsPerSecond(opened.store, side);
      m.on.push(got.on as number);
      m.off.push(got.off as number);
      m.ratios.push((got.on as number) / (got.off as number));
    }
  } finally {
    await opened.store.close();
    await opened.remove();
  }
  return m;
}

const opens: Array<() => Promise<Opened>> = [openSqlite];
if (process.env.TASKRAIL_REDIS_URL)
  opens.push(() => openRedis(process.env.TASKRAIL_REDIS_URL as string));
if (PG_BASE !== '') opens.push(openPostgres);
const results: Measured[] = [];
for (const open of opens) results.push(await measure(await open()));

const rate = (values: number[]) => `${median(values).toFixed(0)} (${spread(values, 0)})`;
report({
  title: 'The per-principal cap in the creating write: store creates, cap on against off',
  description:
    `Store creates per second through the TaskStore, ${IN_FLIGHT} in flight, ${PRINCIPALS} principals in turn, ${CREATES} unfinished tasks per round. ` +
    `**on**: \`create(record, { maxUnfinished: ${CAP} })\` (the default \`--max-queued-per-principal\`: SQLite reads its trigger-kept count in the transaction, PostgreSQL raises a per-principal count row in the insert statement, Redis counts and adds to the principal's unfinished zset in the create script); **off**: the same create without the cap (the store still keeps its count: that is part of every create, so this measures the refusal check, not the count's upkeep). ` +
    `Each side has its own principals, so both carry the same growing backlog (up to ${((ROUNDS + 1) * CREATES) / PRINCIPALS} unfinished tasks per principal). ` +
    `One unmeasured run per side, then ${ROUNDS} rounds, on and off interleaved (order swapped every round). The ratio is on / off per round; median (min–max).`,
  columns: [
    'store',
    'creates/s, cap off (min–max)',
    'creates/s, cap on (min–max)',
    'ratio on / off (min–max)',
  ],
  rows: results.map((r) => [
    r.name,
    rate(r.off),
    rate(r.on),
    `${median(r.ratios).toFixed(2)}× (${spread(r.ratios)})`,
  ]),
  goals: results
    .filter((r) => r.name !== 'SQLite')
    .map((r) => ({
      text: `${r.name} create with the cap on ≥ 0.9× off (${median(r.ratios).toFixed(2)}×)`,
      met: median(r.ratios) >= 0.9,
    })),
});
process.exit(0);
