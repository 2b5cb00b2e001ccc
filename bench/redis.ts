/**
 * Redis store throughput: create and get per second through `RedisTaskStore`, next to raw
 * ioredis SET / GET of the same record as one JSON string, measured in the same run against
 * the same server. Needs TASKRAIL_REDIS_URL. Run: `node .build/bench/redis.js` (prints one
 * JSON line). Uses a fresh key prefix and deletes its keys afterwards.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { openRedisStore } from '../src/stores/redis/index.js';
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

const ROUNDS = 3;
const WRITES = 1000;
const READS = 3000;
/** Requests in flight at once in the concurrent runs (a busy server's many connections). */
const IN_FLIGHT = 32;
const PLAN: Plan = { rounds: ROUNDS, writes: WRITES, reads: READS, inFlight: IN_FLIGHT };

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
  let samples: Record<string, number[]>;
  try {
    samples = await compareThroughput(PLAN, storeTarget(store), rawTarget(redis, prefix));
  } finally {
    await store.close();
    await deletePrefix(redis, prefix);
    redis.disconnect();
  }
  const ratio = (mode: Mode, op: Op) => storeRatio(samples, mode, op);
  const rows = throughputRows(PLAN, samples, {
    raw: 'raw ioredis SET/GET (baseline)',
    store: 'redis store',
  });
  return {
    title: 'Redis store: create and get throughput',
    description:
      `Operations per second against ${url.host}, ${ROUNDS} rounds of ${WRITES} creates and ` +
      `${READS} gets, one at a time and ${IN_FLIGHT} in flight. Baseline: raw ioredis SET (with ` +
      'expiry) / GET + JSON.parse of the same record on the same connection type. A store create ' +
      'is one Lua script (hash, three index entries, expiry, event publish); one with an ' +
      'idempotency key first reserves the key in a second script.',
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
