/**
 * A 10 ms tool seen completed by taskrail's own client (ledger, push), `taskrail serve` with its
 * worker in the same process, on Postgres beside the same on Redis (the baseline), in
 * interleaved rounds so both see the same machine load. Needs TASKRAIL_POSTGRES_URL and
 * TASKRAIL_REDIS_URL; a fresh schema and key prefix, removed after.
 */
import { randomBytes } from 'node:crypto';
import { deleteRedisKeys } from '../test/helpers/redis-keys.js';
import { clientLatency } from './lib/e2e.js';
import { serveBench, type ChildServer } from './lib/http.js';
import {
  dropStoreSchema,
  exitUnlessPostgres,
  freshSchema,
  loadNow,
  loadRange,
} from './lib/pg-bench.js';
import { median, percentile, report, spread } from './lib/stats.js';

const TITLE = "Postgres vs Redis: a 10 ms tool seen completed by taskrail's client";
const TOOLS = '.build/bench/lib/pg-tools.js';
const ROUNDS = 4;
const PER_ROUND = 20;

exitUnlessPostgres(TITLE);
const redisBase = process.env['TASKRAIL_REDIS_URL'] ?? '';
const { schema, url } = freshSchema();
const prefix = `bench-${randomBytes(4).toString('hex')}`;
const serve = (store: string) => serveBench(store, TOOLS);

interface Side {
  taskrail: number[];
  bare: number[];
  roundP50: number[];
}

async function measure(): Promise<{ postgres: Side; redis: Side | undefined; load: number[] }> {
  const servers: ChildServer[] = [];
  const postgres: Side = { taskrail: [], bare: [], roundP50: [] };
  const redis: Side = { taskrail: [], bare: [], roundP50: [] };
  const load: number[] = [];
  try {
    const onPg = await serve(url);
    servers.push(onPg);
    let onRedis: ChildServer | undefined;
    if (redisBase !== '') {
      const redisUrl = new URL(redisBase);
      redisUrl.searchParams.set('prefix', prefix);
      onRedis = await serve(redisUrl.toString());
      servers.push(onRedis);
    }
    const sides: [Side, ChildServer | undefined][] = [
      [postgres, onPg],
      [redis, onRedis],
    ];
    for (let round = 0; round < ROUNDS; round++) {
      for (const [side, server] of round % 2 === 0 ? sides : [...sides].reverse()) {
        if (server === undefined) continue;
        const run = await clientLatency(server.url, PER_ROUND);
        side.taskrail.push(...run.taskrail);
        side.bare.push(...run.bare);
        side.roundP50.push(median(run.taskrail));
        load.push(loadNow());
      }
    }
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
  return { postgres, redis: redisBase === '' ? undefined : redis, load };
}

let measured: Awaited<ReturnType<typeof measure>>;
try {
  measured = await measure();
} finally {
  await dropStoreSchema(schema);
  if (redisBase !== '') await deleteRedisKeys(redisBase, prefix);
}
const { postgres, redis, load } = measured;
const row = (name: string, side: Side) => [
  name,
  `${median(side.taskrail).toFixed(2)} / ${percentile(side.taskrail, 99).toFixed(2)}`,
  spread(side.roundP50),
  `${median(side.bare).toFixed(2)}`,
];
const pgP50 = median(postgres.taskrail);
const redisP50 = redis === undefined ? undefined : median(redis.taskrail);
report({
  title: TITLE,
  description:
    `\`taskrail serve\` (worker in the same process) on each store; ${ROUNDS} interleaved rounds ` +
    `of ${PER_ROUND} calls of a 10 ms tool through \`TaskrailClient\` (ledger, push by ` +
    'subscriptions/listen), ms from `callTool` until it holds the outcome. A bare 10 ms timer ' +
    `is timed between calls. ${loadRange(load)} (1-minute load average, shared 2-core machine).`,
  columns: ['store', 'ms p50 / p99', 'round p50s', 'bare 10 ms wait, p50'],
  rows: [
    row('Postgres', postgres),
    redis === undefined
      ? ['Redis (baseline)', 'skipped: TASKRAIL_REDIS_URL is not set', '', '']
      : row('Redis (baseline)', redis),
    [
      'Postgres / Redis, p50',
      redisP50 === undefined ? 'n/a' : `${(pgP50 / redisP50).toFixed(2)}×`,
      '',
      loadRange(load),
    ],
  ],
  goals: [
    {
      text: `Postgres within 1.5× the Redis figure at p50 (${redisP50 === undefined ? 'no Redis' : `${(pgP50 / redisP50).toFixed(2)}×`}, ${loadRange(load)})`,
      met: redisP50 !== undefined && pgP50 <= 1.5 * redisP50,
    },
  ],
});
