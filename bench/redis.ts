/**
 * Redis store throughput: create and get per second through `RedisTaskStore`, next to raw
 * ioredis SET / GET of the same record as one JSON string, measured in the same run against
 * the same server. Needs TASKRAIL_REDIS_URL. Run: `node .build/bench/redis.js` (prints one
 * JSON line). Uses a fresh key prefix and deletes its keys afterwards.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { TaskStore } from '../src/store/port.js';
import { openRedisStore } from '../src/stores/redis/index.js';
import type { TaskRecord } from '../src/task/record.js';
import { benchRecords } from './_records.js';
import { median, report, spread, type Section } from './_stats.js';

const ROUNDS = 3;
const WRITES = 1000;
const READS = 3000;
/** Requests in flight at once in the concurrent runs (a busy server's many connections). */
const IN_FLIGHT = 32;

type Op = 'create' | 'get';
type Mode = 'sequential' | 'concurrent';
interface Target {
  create(task: TaskRecord): Promise<unknown>;
  get(id: string): Promise<unknown>;
}

function storeTarget(store: TaskStore): Target {
  return { create: (task) => store.create(task), get: (id) => store.get(id) };
}

/** The floor: one SET with expiry per create, one GET + JSON.parse per read. */
function rawTarget(redis: Redis, prefix: string): Target {
  return {
    create: (task) => redis.set(`${prefix}:raw:${task.id}`, JSON.stringify(task), 'PX', 3_600_000),
    get: async (id) => {
      const json = await redis.get(`${prefix}:raw:${id}`);
      return json === null ? undefined : (JSON.parse(json) as TaskRecord);
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

async function deletePrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.unlink(...keys);
  } while (cursor !== '0');
}

async function main(baseUrl: string): Promise<Section> {
  const prefix = `trbench-${randomBytes(4).toString('hex')}`;
  const url = new URL(baseUrl);
  url.searchParams.set('prefix', prefix);
  const store = await openRedisStore(url.toString());
  url.searchParams.delete('prefix');
  const redis = new Redis(url.toString());
  const samples: Record<string, number[]> = {};
  const add = (key: string, value: number) => (samples[key] ??= []).push(value);
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const mode of ['sequential', 'concurrent'] as const) {
        // Alternate which side goes first, so neither always meets a warmer server.
        const sides = [
          ['store', storeTarget(store)],
          ['raw', rawTarget(redis, prefix)],
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
    await deletePrefix(redis, prefix);
    redis.disconnect();
  }
  const of = (key: string) => samples[key] ?? [0];
  const ratio = (mode: Mode, op: Op) =>
    median(of(`${mode} ${op} store`)) / median(of(`${mode} ${op} raw`));
  const rows = (['sequential', 'concurrent'] as const).flatMap((mode) =>
    (['create', 'get'] as const).flatMap((op) =>
      (['raw', 'store'] as const).map((side) => [
        `${op} (${mode === 'sequential' ? 'one at a time' : `${IN_FLIGHT} in flight`})`,
        side === 'raw' ? 'raw ioredis SET/GET (baseline)' : 'redis store',
        Math.round(median(of(`${mode} ${op} ${side}`))),
        spread(of(`${mode} ${op} ${side}`), 0),
        side === 'raw' ? 1 : ratio(mode, op),
      ]),
    ),
  );
  return {
    title: 'Redis store: create and get throughput',
    description:
      `Operations per second against ${url.host}, ${ROUNDS} rounds of ${WRITES} creates and ` +
      `${READS} gets, one at a time and ${IN_FLIGHT} in flight. Baseline: raw ioredis SET (with ` +
      'expiry) / GET + JSON.parse of the same record on the same connection type. A store create ' +
      'is one Lua script (idempotency check, hash, three index entries, expiry, event publish).',
    columns: ['operation', 'implementation', 'ops/s (median)', 'spread', 'ratio to raw'],
    rows,
    goals: [
      {
        text: 'store create at least 1/4 of raw SET, one at a time',
        met: ratio('sequential', 'create') >= 1 / 4,
      },
      {
        text: 'store get at least 1/2 of raw GET, one at a time',
        met: ratio('sequential', 'get') >= 0.5,
      },
    ],
  };
}

const baseUrl = process.env['TASKRAIL_REDIS_URL'];
if (baseUrl === undefined || baseUrl === '') {
  report({
    title: 'Redis store: create and get throughput',
    description: 'Skipped: TASKRAIL_REDIS_URL is not set (e.g. redis://127.0.0.1:6379/0).',
    columns: [],
    rows: [],
    goals: [],
  });
} else {
  report(await main(baseUrl));
}
