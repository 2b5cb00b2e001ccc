/**
 * Child process of the engine benchmark: retained heap per task with `count` (argv[3]) tasks
 * parked on input, on a `memory` or `sqlite` store (argv[2]), alone in a fresh process so no
 * earlier measurement's garbage is counted. Prints `{"bytesPerTask": …}`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskRuntime } from '../../src/runtime/runtime.js';
import type { TaskStore } from '../../src/store/port.js';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import { catalog } from './engine-tools.js';
import { gc } from './stats.js';

const silent = { info() {}, warn() {}, error() {} };
const kind = process.argv[2] === 'sqlite' ? 'sqlite' : 'memory';
const count = Number(process.argv[3] ?? 10_000);
const dir = mkdtempSync(join(tmpdir(), 'taskrail-bench-heap-'));

/**
 * What one more parked task costs: the heap grown from `count / 2` to `count` parked tasks,
 * over `count / 2`. Heap used from a fresh start to `count` also holds what the first tasks
 * warmed up once (compiled code, inline caches, statement caches: ~0.8 MB), which is no task's.
 */
async function heapPerParkedTask(store: TaskStore): Promise<{ perTask: number; fixed: number }> {
  const runtime = new TaskRuntime({ store, tools: catalog, logger: silent, concurrency: 64 });
  runtime.start();
  gc();
  const start = process.memoryUsage().heapUsed;
  let parked = 0;
  const half = Math.floor(count / 2);
  const waiters = new Map<number, () => void>();
  store.events.on('task:transition', ({ to }) => {
    if (to === 'input_required') waiters.get(++parked)?.();
  });
  const parkedUpTo = async (target: number): Promise<number> => {
    const reached = new Promise<void>((resolve) => waiters.set(target, resolve));
    for (let i = parked; i < target; i += 1)
      await runtime.createTask({ tool: 'park', arguments: { i }, principal: 'bench' });
    await reached;
    gc();
    return process.memoryUsage().heapUsed;
  };
  const atHalf = await parkedUpTo(half);
  const atFull = await parkedUpTo(count);
  await runtime.stop();
  await store.close();
  const perTask = (atFull - atHalf) / (count - half);
  return { perTask, fixed: atHalf - start - perTask * half };
}

const store: TaskStore =
  kind === 'sqlite' ? new SqliteTaskStore(join(dir, 'tasks.db')) : new MemoryTaskStore();
const { perTask, fixed } = await heapPerParkedTask(store);
rmSync(dir, { recursive: true, force: true });
process.stdout.write(`${JSON.stringify({ bytesPerTask: perTask, fixedBytes: fixed })}\n`);
