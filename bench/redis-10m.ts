/**
 * `tasks/get` over HTTP with 1,000 vs 10,000,000 stored tasks on Redis, and the memory and RDB
 * bytes a stored small task costs. Each dataset lives in its own private redis-server on a
 * loopback port (never the shared Redis); the large one is filled once and kept as an RDB file in
 * the OS temp folder (see _redis-server.ts). Two `taskrail serve` children, one per Redis, are
 * driven in interleaved rounds by the raw-socket generator, each request a different random
 * task. TASKRAIL_BENCH_REDIS_TASKS sets another large size (to try the bench quickly).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RedisKeys } from '../src/stores/redis/keys.js';
import { checked, endpoint, rounds, serveBench, wire2026 } from './lib/http.js';
import { driveEach, processCpuNs, rawRequest, type LoadResult } from './lib/load.js';
import { taskIdAt } from './lib/redis-fill.js';
import { cachedRedis, filledRedis, FILL_PREFIX, type FilledRedis } from './lib/redis-server.js';
import { median, report, spread, type Section } from './lib/stats.js';

const SMALL = 1_000;
const LARGE = Number(process.env['TASKRAIL_BENCH_REDIS_TASKS'] ?? 10_000_000);
const ROUNDS = 12;
const SLICE_MS = 500;
const CONNECTIONS = 32;
/** Random tasks of the large store asked for, each once: more than the rounds can send. */
const POOL = 100_000;
const SPOT_CHECKS = 200;
const GOAL = 0.8;
const TITLE = `HTTP: tasks/get with ${SMALL.toLocaleString('en')} vs ${LARGE.toLocaleString('en')} stored tasks (Redis), and memory bytes per task`;

if (spawnSync('redis-server', ['--version']).status !== 0) {
  const description = 'Skipped: no `redis-server` on the PATH (the section starts its own).';
  report({ title: TITLE, description, columns: [], rows: [], goals: [] });
  process.exit(0);
}

const dir = mkdtempSync(join(tmpdir(), 'taskrail-bench-redis-10m-'));
const small = await filledRedis(dir, SMALL);
const large = await cachedRedis(LARGE, small.emptyBytes).catch(async (error: unknown) => {
  // Too big for this machine's free memory (or the fill failed): an unmet goal, with why.
  await small.server.stop();
  rmSync(dir, { recursive: true, force: true });
  const goal = {
    text: `tasks/get with ${LARGE.toLocaleString('en')} stored tasks on Redis: not measured`,
    met: false,
  };
  report({
    title: TITLE,
    description: `Not run: ${String(error)}`,
    columns: [],
    rows: [],
    goals: [goal],
  });
  process.exit(0);
});
const keys = new RedisKeys(FILL_PREFIX, 1);

/** `count` distinct task indexes in `0…size - 1`, uniformly at random, in random order. */
function randomIndexes(size: number, count: number): number[] {
  const picked = new Set<number>();
  while (picked.size < Math.min(size, count)) picked.add(Math.floor(Math.random() * size));
  return [...picked];
}

/** The ids of the picked tasks; every one must exist in Redis, or the run fails. */
async function sampledIds(filled: FilledRedis, size: number, count: number): Promise<string[]> {
  const ids = randomIndexes(size, count).map((i) => taskIdAt(filled.seed, i));
  const pipeline = filled.server.client.pipeline();
  for (const id of ids) pipeline.exists(keys.task(id));
  const missing = ((await pipeline.exec()) ?? []).filter(([, found]) => found !== 1).length;
  if (missing > 0) throw new Error(`${missing} of ${ids.length} sampled tasks are not in Redis`);
  return ids;
}

const ids = {
  small: await sampledIds(small, SMALL, SMALL),
  large: await sampledIds(large, LARGE, POOL),
};
const serve = (filled: FilledRedis) => serveBench(filled.server.url);
const servers = { small: await serve(small), large: await serve(large) };
const redisPids = { small: small.server.pid, large: large.server.pid };

/** Every id's tasks/get request, built once; the generator sends them in turn, cycling. */
function requestCycle(url: string, taskIds: string[]): () => Buffer {
  const requests = taskIds.map((taskId) =>
    rawRequest(url, wire2026('tasks/get', { taskId }, true)),
  );
  let next = 0;
  return () => requests[next++ % requests.length] as Buffer;
}
const cycles = {
  small: requestCycle(servers.small.url, ids.small),
  large: requestCycle(servers.large.url, ids.large),
};

/** Replies name the asked task, completed: the rounds' load then sends the same requests. */
async function spotCheck(which: 'small' | 'large'): Promise<void> {
  const ep = endpoint(servers[which].url);
  for (const taskId of ids[which].slice(-SPOT_CHECKS)) {
    const result = await checked(ep, wire2026('tasks/get', { taskId }, true));
    const task = (result['task'] ?? result) as { taskId?: string; status?: string };
    if (task.taskId !== taskId || task.status !== 'completed') {
      throw new Error(`tasks/get ${taskId} answered ${JSON.stringify(result).slice(0, 300)}`);
    }
  }
  ep.close();
}
await spotCheck('small');
await spotCheck('large');

interface Measured extends LoadResult {
  redisCpuUs: number;
}
const measure = (which: 'small' | 'large', ms: number) => async (): Promise<Measured> => {
  const server = servers[which];
  const redis0 = processCpuNs(redisPids[which]);
  const load = await driveEach(
    server.url,
    cycles[which],
    server.process.pid as number,
    CONNECTIONS,
    ms,
  );
  const redisCpuUs = (processCpuNs(redisPids[which]) - redis0) / 1000 / load.requests;
  return { ...load, redisCpuUs };
};
await measure('small', 300)();
await measure('large', 300)();
const m = await rounds<'small' | 'large', Measured>(ROUNDS, {
  small: measure('small', SLICE_MS),
  large: measure('large', SLICE_MS),
});
const largeSent = m.large.reduce((sum, r) => sum + r.requests, 0);

await Promise.all(Object.values(servers).map((s) => s.stop()));
await Promise.all([small.server.stop(), large.server.stop()]);
rmSync(dir, { recursive: true, force: true });

const ratios = m.large.map((r, i) => r.perSecond / (m.small[i] as Measured).perSecond);
const ratio = median(ratios);
const cpuRatio =
  median(m.large.map((r) => r.serverCpuUs)) / median(m.small.map((r) => r.serverCpuUs));
const cell = (values: number[], digits = 0) =>
  `${median(values).toFixed(digits)} (${spread(values, digits)})`;
const row = (name: string, results: Measured[], filled: FilledRedis) => [
  name,
  cell(results.map((r) => r.perSecond)),
  cell(results.map((r) => r.serverCpuUs)),
  cell(
    results.map((r) => r.redisCpuUs),
    1,
  ),
  cell(
    results.map((r) => r.clientCpuUs),
    1,
  ),
  filled.memoryBytesPerTask.toFixed(0),
  filled.rdbBytesPerTask.toFixed(0),
];
const origin =
  large.loadSeconds > 0
    ? `filled by an earlier run in ${large.fillSeconds.toFixed(0)} s and loaded from its RDB in ${large.loadSeconds.toFixed(0)} s`
    : `filled in ${large.fillSeconds.toFixed(0)} s`;
const section: Section = {
  title: TITLE,
  description:
    `Two private \`redis-server\`s on loopback ports (default configuration, no persistence while measured), one holding ${SMALL.toLocaleString('en')} completed tasks and one ${LARGE.toLocaleString('en')} (${origin}). ` +
    "Both filled through the store's own `create` (its create script, keys and codec; only the client is replaced by a bulk RESP writer), every task with a ttl (so its key expiry and expiry index too). " +
    `Two \`taskrail serve\` children, one per Redis, driven by the raw-socket generator: ${CONNECTIONS} keep-alive connections, ${ROUNDS} interleaved rounds of ${SLICE_MS} ms; each request is tasks/get of another task picked at random over the whole store (the large: ${POOL.toLocaleString('en')} distinct tasks, ${largeSent.toLocaleString('en')} requests sent, so ${largeSent > POOL ? 'some were asked twice' : 'none was asked twice'}); every sampled id checked present, ${SPOT_CHECKS} replies checked to be that task, completed. ` +
    'CPU per request from /proc/PID/task/*/schedstat: the serve process, its Redis, and the load generator. ' +
    "Memory: INFO used_memory minus an empty server's, per task (all of its keys and index entries, after loading the RDB for a cached fill); RDB: the saved file per task. " +
    `Fails if the large store's req/s falls below ${GOAL}× the small one's (median of the per-round ratios).`,
  columns: [
    'stored tasks',
    'tasks/get req/s (min–max of rounds)',
    'serve CPU µs per request',
    'Redis CPU µs per request',
    'generator CPU µs per request',
    'Redis memory bytes per task',
    'RDB bytes per task',
  ],
  rows: [
    row(SMALL.toLocaleString('en'), m.small, small),
    row(LARGE.toLocaleString('en'), m.large, large),
    [
      `ratio ${LARGE.toLocaleString('en')} / ${SMALL.toLocaleString('en')}`,
      `${ratio.toFixed(2)}× (${spread(ratios)})`,
      `${cpuRatio.toFixed(2)}×`,
      '',
      '',
      '',
      '',
    ],
  ],
  goals: [
    {
      text: `tasks/get with ${LARGE.toLocaleString('en')} stored tasks on Redis within 20% of ${SMALL.toLocaleString('en')} (req/s ${ratio.toFixed(2)}×, at least ${GOAL}×)`,
      met: ratio >= GOAL,
    },
  ],
};
report(section);
process.exit(0);
