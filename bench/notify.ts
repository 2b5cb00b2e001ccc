/**
 * Push versus poll: how long after a task's terminal transition does a client know? Subscribed
 * taskrail clients (`subscriptions/listen`) on one node and, with TASKRAIL_REDIS_URL, across two
 * replicas sharing a Redis prefix; baseline: a polling client at the default 1000 ms interval.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryLedger, TaskrailClient } from '../src/client/index.js';
import { createTaskServer, type TaskServer } from '../src/server/index.js';
import type { TaskStore } from '../src/store/port.js';
import { SqliteTaskStore } from '../src/stores/sqlite/index.js';
import { median, percentile, report, spread, type Section } from './lib/stats.js';

const silent = { info() {}, warn() {}, error() {} };
const REDIS = process.env.TASKRAIL_REDIS_URL;

interface Node {
  app: TaskServer;
  url: string;
  release(key: string): void;
}

async function startNode(store: TaskStore, executor: 'local' | 'none' = 'local'): Promise<Node> {
  const gates = new Map<string, () => void>();
  const early = new Set<string>();
  const app = createTaskServer({ store, logger: silent, runtime: { executor, concurrency: 1000 } });
  app.tool(
    'hold',
    { description: 'ends when released', task: { mode: 'required' } },
    async (args) => {
      const key = String(args['key']);
      if (!early.delete(key)) await new Promise<void>((resolve) => gates.set(key, resolve));
      return { content: [{ type: 'text', text: key }] };
    },
  );
  const { url } = await app.listen(0);
  return {
    app,
    url,
    release(key) {
      const open = gates.get(key);
      if (open === undefined) return void early.add(key);
      gates.delete(key);
      open();
    },
  };
}

/** Terminal transition time of each task, taken from the store event of the node that ran it. */
function transitions(store: TaskStore): Map<string, number> {
  const at = new Map<string, number>();
  store.events.on('task:transition', ({ task, to }) => {
    if (to === 'completed') at.set(task.id, performance.now());
  });
  return at;
}

/** A client that stamps the moment it learns each task completed. */
function stampingClient(
  url: string,
  push: boolean,
): { client: TaskrailClient; known: Map<string, number> } {
  const known = new Map<string, number>();
  const client = new TaskrailClient({
    url,
    ledger: new MemoryLedger(),
    validateArguments: false,
    ...(push ? {} : { push: false as const }),
    onEvent: (e) => {
      if (e.type === 'status' && e.status === 'completed') known.set(e.taskId, performance.now());
    },
  });
  return { client, known };
}

/** Our keys only: the Redis is shared, so never FLUSHDB. */
async function deletePrefix(url: URL, prefix: string): Promise<void> {
  const { Redis } = await import('ioredis');
  const plain = new URL(url);
  plain.searchParams.delete('prefix');
  const redis = new Redis(plain.toString());
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
    cursor = next;
    if (found.length > 0) await redis.unlink(...found);
  } while (cursor !== '0');
  redis.disconnect();
}

let keys = 0;

/** Starts `count` tasks on `runner`, follows them from `watcher`, releases them, returns delays. */
async function measure(
  runner: Node,
  watcher: Node,
  push: boolean,
  count: number,
  releaseAfter: () => number,
): Promise<number[]> {
  const transitioned = transitions(runner.app.store);
  const starter = stampingClient(runner.url, false).client;
  const { client, known } = stampingClient(watcher.url, push);
  const tasks = await Promise.all(
    Array.from({ length: count }, async () => {
      const key = `k${++keys}`;
      const call = await starter.callTool('hold', { key }, { background: true });
      call.detach();
      const id = call.taskId as string;
      client.ledger.record({
        id,
        server: client.url,
        tool: 'hold',
        arguments: { key },
        status: 'working',
        pollIntervalMs: 1000,
        nextPollAt: Date.now() + 1000,
        ttlMs: null,
        ownerPid: process.pid,
      });
      const watched = await client.attach(id);
      return { id, key, done: watched.result() };
    }),
  );
  await new Promise((resolve) => setTimeout(resolve, 50)); // let the streams open
  for (const task of tasks) setTimeout(() => runner.release(task.key), releaseAfter());
  await Promise.all(tasks.map((t) => t.done));
  starter.close();
  client.close();
  return tasks.map((t) => (known.get(t.id) as number) - (transitioned.get(t.id) as number));
}

async function sequential(runner: Node, watcher: Node, rounds: number): Promise<number[]> {
  const all: number[] = [];
  for (let i = 0; i < rounds; i += 1)
    all.push(...(await measure(runner, watcher, true, 1, () => 0)));
  return all;
}

function sqlite(): TaskStore {
  return new SqliteTaskStore(join(mkdtempSync(join(tmpdir(), 'taskrail-notify-')), 'tasks.db'));
}

const ROUNDS = 200;
const node = await startNode(sqlite());
const pushOne = await sequential(node, node, ROUNDS);
const pushBurst = await measure(node, node, true, 200, () => 0);
const polled = await measure(node, node, false, 100, () => Math.random() * 2000);
await node.app.close(1000);
await node.app.store.close();

let pushRedis: number[] | undefined;
if (REDIS !== undefined && REDIS !== '') {
  const { openRedisStore } = await import('../src/stores/redis/index.js');
  const url = new URL(REDIS);
  url.searchParams.set('prefix', `bench-notify-${process.pid}-${Date.now()}`);
  const [a, b] = [await openRedisStore(url.toString()), await openRedisStore(url.toString())];
  const runner = await startNode(a);
  const other = await startNode(b, 'none');
  pushRedis = await sequential(runner, other, ROUNDS);
  await other.app.close(1000);
  await runner.app.close(1000);
  await a.close();
  await b.close();
  await deletePrefix(url, String(url.searchParams.get('prefix')));
}

const row = (name: string, s: number[]) => [
  name,
  s.length,
  median(s),
  percentile(s, 99),
  spread(s),
  median(polled) / median(s),
];
const p99 = percentile(pushOne, 99);
const section: Section = {
  title: 'Notifications: push versus poll',
  description:
    "Time from a task's terminal transition (the store event on the node that ran it) to the moment a taskrail client knows the outcome. " +
    `Subscribed clients follow the task over \`subscriptions/listen\`; ${ROUNDS} tasks one after another, then 200 streams released at once. ` +
    'Baseline: a polling client at the default 1000 ms `pollIntervalMs`, 100 tasks ending at random moments. ' +
    (pushRedis === undefined
      ? 'The two-replica row needs TASKRAIL_REDIS_URL (not set in this run).'
      : 'Two replicas: the task runs on one server, the client subscribes on another; both share one Redis prefix.'),
  columns: ['client', 'tasks', 'median ms', 'p99 ms', 'spread ms', 'median speed-up over polling'],
  rows: [
    row('polling, 1000 ms interval (baseline)', polled),
    row('subscribed, one node (SQLite)', pushOne),
    row('subscribed, one node, 200 at once', pushBurst),
    ...(pushRedis === undefined ? [] : [row('subscribed, two replicas on Redis', pushRedis)]),
  ],
  goals: [
    { text: `p99 push delay ≤ 50 ms on one node (${p99.toFixed(1)} ms)`, met: p99 <= 50 },
    ...(pushRedis === undefined
      ? []
      : [
          {
            text: `p99 push delay ≤ 50 ms across two replicas on Redis (${percentile(pushRedis, 99).toFixed(1)} ms)`,
            met: percentile(pushRedis, 99) <= 50,
          },
        ]),
  ],
};
report(section);
