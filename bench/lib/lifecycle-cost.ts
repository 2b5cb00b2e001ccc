/**
 * What one task lifecycle (create → run → complete, a no-op tool) costs a Redis store: the
 * commands by name, round trips and bytes, counted with INFO commandstats / INFO stats deltas
 * on a redis-server this script starts for itself (so nobody else's traffic is counted).
 * Not a `npm run bench` section (it lives in bench/lib/): run `node .build/bench/lib/lifecycle-cost.js`
 * after `npm run pretest`. Two deployments: `local` (a serve that also works, the creating
 * process runs the task itself) and `queue` (a `serve --no-worker` replica and a worker,
 * through BullMQ). Numbers feed docs/scaling.md.
 */
import { Redis } from 'ioredis';
import { createBullmqExecutor } from '../../src/executors/bullmq/index.js';
import type { ToolCatalog } from '../../src/runtime/api.js';
import { TaskRuntime } from '../../src/runtime/runtime.js';
import type { TaskStore } from '../../src/store/port.js';
import { openRedisStore } from '../../src/stores/redis/index.js';
import { isTerminal } from '../../src/task/status.js';
import { startOwnRedis } from '../../test/helpers/own-redis.js';

const TASKS = Number(process.env['TASKS'] ?? 300);
// As a process at `--log-level warn`: no transition log, so no read-backs for it.
const silent = { info() {}, warn() {}, error() {}, enabled: (level: string) => level !== 'info' };
const catalog: ToolCatalog = {
  get: (name) =>
    name === 'noop'
      ? { name, task: { mode: 'optional' }, handler: () => ({ content: [] }) }
      : undefined,
};

interface Counters {
  calls: Map<string, number>;
  netIn: number;
  netOut: number;
  cpuMs: number;
  aofBytes: number;
  memoryBytes: number;
}

async function counters(redis: Redis): Promise<Counters> {
  const stats = await redis.info('commandstats');
  const calls = new Map<string, number>();
  for (const match of stats.matchAll(/cmdstat_([^:]+):calls=(\d+)/g)) {
    calls.set(match[1] as string, Number(match[2]));
  }
  const net = await redis.info('stats');
  const number = (name: string) => Number(new RegExp(`${name}:(\\d+)`).exec(net)?.[1] ?? 0);
  const cpu = await redis.info('cpu');
  const seconds = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(cpu)?.[1] ?? 0);
  const aof = await redis.info('persistence');
  const memory = await redis.info('memory');
  return {
    calls,
    netIn: number('total_net_input_bytes'),
    netOut: number('total_net_output_bytes'),
    cpuMs: (seconds('used_cpu_sys') + seconds('used_cpu_user')) * 1000,
    aofBytes: Number(/aof_current_size:(\d+)/.exec(aof)?.[1] ?? 0),
    memoryBytes: Number(/used_memory:(\d+)/.exec(memory)?.[1] ?? 0),
  };
}

function delta(before: Counters, after: Counters, skip: Set<string>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, calls] of after.calls) {
    if (skip.has(name)) continue;
    const diff = calls - (before.calls.get(name) ?? 0);
    if (diff > 0) out[name] = Number((diff / TASKS).toFixed(2));
  }
  return out;
}

/** Names a script call by the first KEYS entry's last segment (`…:task:<id>` → `task`). */
function scriptOf(args: string[]): string {
  const key = args[3] ?? '';
  const parts = key.split(':');
  return parts.length > 2 ? (parts[parts.length - 2] as string) : (args[2] ?? '?');
}

/** Runs TASKS lifecycles one after another, each awaited through the worker's own events. */
async function lifecycles(creator: TaskRuntime, runner: TaskStore): Promise<number> {
  const started = Date.now();
  for (let i = 0; i < TASKS; i++) {
    const done = new Promise<void>((resolve) => {
      const off = runner.events.on('task:transition', ({ to }) => {
        if (!isTerminal(to)) return;
        off();
        resolve();
      });
    });
    await creator.createTask({ tool: 'noop', arguments: {}, principal: 'alice' });
    await done;
  }
  return Date.now() - started;
}

async function measure(mode: 'local' | 'queue', url: string, admin: Redis): Promise<void> {
  const stores = [await openRedisStore(url), await openRedisStore(url)];
  const [serveStore, workerStore] = stores as [TaskStore, TaskStore];
  const work = createBullmqExecutor({ connectionUrl: url, mode: 'work', store: workerStore });
  const worker = new TaskRuntime({
    store: workerStore,
    tools: catalog,
    logger: silent,
    executor: work,
  });
  worker.start();
  await work.ready();
  const serve =
    mode === 'queue'
      ? new TaskRuntime({
          store: serveStore,
          tools: catalog,
          logger: silent,
          executor: createBullmqExecutor({
            connectionUrl: url,
            mode: 'dispatch',
            store: serveStore,
          }),
        })
      : worker;
  if (serve !== worker) serve.start();
  await lifecycles(serve, workerStore); // warm-up: scripts loaded, connections open
  const before = await counters(admin);
  const ms = await lifecycles(serve, workerStore);
  const after = await counters(admin);
  // A second pass under MONITOR (which costs Redis CPU and bytes) names what clients sent.
  const monitor = await admin.monitor();
  const sent = new Map<string, number>();
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (source === 'lua' || args[0]?.toLowerCase() === 'info') return;
    const name = args[0]?.toLowerCase() === 'evalsha' ? `evalsha:${scriptOf(args)}` : args[0];
    sent.set(name ?? '?', (sent.get(name ?? '?') ?? 0) + 1);
  });
  await lifecycles(serve, workerStore);
  monitor.disconnect();
  const skip = new Set(['info']);
  const perTask = delta(before, after, skip);
  const trips = Object.values(perTask).reduce((sum, n) => sum + n, 0);
  console.log(
    JSON.stringify({
      mode,
      tasks: TASKS,
      msPerTask: Number((ms / TASKS).toFixed(2)),
      commandsPerTask: Number(trips.toFixed(1)),
      sentPerTask: Number(([...sent.values()].reduce((a, b) => a + b, 0) / TASKS).toFixed(1)),
      sent: Object.fromEntries(
        [...sent].map(([name, n]) => [name, Number((n / TASKS).toFixed(2))]),
      ),
      bytesInPerTask: Math.round((after.netIn - before.netIn) / TASKS),
      bytesOutPerTask: Math.round((after.netOut - before.netOut) / TASKS),
      redisCpuUsPerTask: Math.round(((after.cpuMs - before.cpuMs) * 1000) / TASKS),
      aofBytesPerTask: Math.round((after.aofBytes - before.aofBytes) / TASKS),
      // The finished tasks stay stored until their TTL: what each one holds in memory.
      memoryBytesPerTask: Math.round((after.memoryBytes - before.memoryBytes) / TASKS),
      perTask,
    }),
  );
  await serve.stop(1000);
  if (serve !== worker) await worker.stop(1000);
  await work.closed();
  for (const store of stores) await store.close();
}

const redis = await startOwnRedis({ appendonly: true, appendfsync: 'everysec' });
const admin = new Redis(redis.url);
try {
  await measure('local', `${redis.url}?prefix=local`, admin);
  await measure('queue', `${redis.url}?prefix=queue`, admin);
} finally {
  admin.disconnect();
  await redis.remove();
}
