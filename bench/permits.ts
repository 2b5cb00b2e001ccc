/**
 * Concurrency permits: how long after one task of a concurrency-1 tool returns the next
 * waiting task's handler starts. Between the two: the first task's outcome write (which ends
 * its lease, and with it the permit), the permit's release naming the next waiter, its wake-up
 * (SQLite: the same process's executor; Redis: a BullMQ job; PostgreSQL: a graphile-worker
 * job), its claim, its permit and the write that clears its waiting message. Wall clocks of
 * one machine; tasks all created up front, so every start after the first waited for a permit.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checked, endpoint, MAIN, pause, startServer, wire2026 } from './lib/http.js';
import { dropStoreSchema, freshSchema, PG_BASE } from './lib/pg-bench.js';
import { dropPrefix, freshPrefix, loadNow, REDIS_BASE } from './lib/redis-bench.js';
import { hasRedisServer } from '../test/helpers/own-redis.js';
import { startCluster } from '../test/helpers/redis-cluster.js';
import { percentile, report } from './lib/stats.js';

const TITLE = 'Concurrency permits: release → next waiting task starts';
const TOOLS = '.build/bench/lib/permit-tools.js';
const TASKS = 41;

/** ms from each handler's return to the next one's start (the chain of one permit). */
async function handOffs(serveArgs: string[], workerArgs?: string[]): Promise<number[]> {
  const replica = await startServer(MAIN, serveArgs);
  const worker =
    workerArgs === undefined ? undefined : await startServer(MAIN, workerArgs, {}, /(ready)/);
  const ep = endpoint(replica.url);
  try {
    const ids: string[] = [];
    for (let i = 0; i < TASKS; i++) {
      const created = await checked(
        ep,
        wire2026('tools/call', { name: 'one_at_a_time', arguments: {} }, true),
      );
      ids.push(String(created['taskId']));
    }
    const spans: [number, number][] = [];
    for (const id of ids) {
      let task = await checked(ep, wire2026('tasks/get', { taskId: id }, true));
      while (task['status'] === 'working') {
        await pause(20);
        task = await checked(ep, wire2026('tasks/get', { taskId: id }, true));
      }
      const text = (task['result'] as { content: { text: string }[] }).content[0]?.text ?? '';
      const [start, end] = text.split(' ').map(Number) as [number, number];
      spans.push([start, end]);
    }
    spans.sort((a, b) => a[0] - b[0]);
    return spans.slice(1).map(([start], i) => start - (spans[i] as [number, number])[1]);
  } finally {
    ep.close();
    await worker?.stop();
    await replica.stop();
  }
}

const quiet = ['--tools', TOOLS, '--log-level', 'warn'];
const rows: (string | number)[][] = [];
const goals: { text: string; met: boolean }[] = [];
const measure = async (name: string, goalMs: number, run: () => Promise<number[]>) => {
  const load = loadNow();
  const gaps = await run();
  const p50 = percentile(gaps, 50);
  rows.push([name, `${p50.toFixed(2)} / ${percentile(gaps, 95).toFixed(2)}`, gaps.length, load]);
  goals.push({ text: `${name}: p50 ≤ ${goalMs} ms (${p50.toFixed(2)})`, met: p50 <= goalMs });
};

const dir = mkdtempSync(join(tmpdir(), 'taskrail-bench-permits-'));
try {
  await measure('SQLite (serve runs its tasks)', 20, () =>
    handOffs(['serve', '--port', '0', ...quiet, '--store', `sqlite:${join(dir, 't.db')}`]),
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (REDIS_BASE !== '') {
  const { prefix, storeUrl } = freshPrefix();
  try {
    const store = ['--store', storeUrl];
    await measure('Redis + BullMQ (serve --no-worker, one worker)', 50, () =>
      handOffs(
        ['serve', '--port', '0', '--no-worker', ...quiet, ...store],
        ['worker', '--concurrency', '4', ...quiet, ...store],
      ),
    );
  } finally {
    await dropPrefix(prefix);
  }
}
if (hasRedisServer()) {
  const cluster = await startCluster(3, 0);
  try {
    const store = ['--store', `${cluster.url}&prefix=${freshPrefix().prefix}`];
    await measure('Redis Cluster, 3 masters + BullMQ (serve --no-worker, one worker)', 50, () =>
      handOffs(
        ['serve', '--port', '0', '--no-worker', ...quiet, ...store],
        ['worker', '--concurrency', '4', ...quiet, ...store],
      ),
    );
  } finally {
    await cluster.stop();
  }
}
if (PG_BASE !== '') {
  const { schema, url } = freshSchema();
  try {
    const store = ['--store', url];
    await measure('PostgreSQL + graphile-worker (serve --no-worker, one worker)', 50, () =>
      handOffs(
        ['serve', '--port', '0', '--no-worker', ...quiet, ...store],
        ['worker', '--concurrency', '4', ...quiet, ...store],
      ),
    );
  } finally {
    await dropStoreSchema(schema);
  }
}
report({
  title: TITLE,
  description:
    `${TASKS} tasks of a tool with \`concurrency: { limit: 1 }\` (a 5 ms handler), created up ` +
    'front; ms from one handler returning to the next handler starting (p50 / p95 over the ' +
    `${TASKS - 1} hand-offs). Redis and PostgreSQL are skipped without TASKRAIL_REDIS_URL / ` +
    'TASKRAIL_POSTGRES_URL; the Redis Cluster (3 masters this bench starts on loopback, the ' +
    "permits in the key's own slot) without redis-server. Load: the 1-minute load average " +
    'before each row.',
  columns: ['store', 'ms p50 / p95', 'hand-offs', 'load'],
  rows,
  goals,
});
