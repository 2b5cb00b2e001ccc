/**
 * Child process of the engine benchmark: retained heap per task with `count` (argv[3]) tasks
 * parked on input, on a `memory` or `sqlite` store (argv[2]), alone in a fresh process so no
 * earlier measurement's garbage is counted. Prints `{"bytesPerTask": …}`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskRuntime } from '../src/runtime/runtime.js';
import type { TaskStore } from '../src/store/port.js';
import { MemoryTaskStore } from '../src/stores/memory/index.js';
import { SqliteTaskStore } from '../src/stores/sqlite/index.js';
import { catalog } from './_engine-tools.js';
import { gc } from './_stats.js';

const silent = { info() {}, warn() {}, error() {} };
const kind = process.argv[2] === 'sqlite' ? 'sqlite' : 'memory';
const count = Number(process.argv[3] ?? 10_000);
const dir = mkdtempSync(join(tmpdir(), 'taskrail-bench-heap-'));

async function heapPerParkedTask(store: TaskStore): Promise<number> {
  const runtime = new TaskRuntime({ store, tools: catalog, logger: silent, concurrency: 64 });
  runtime.start();
  gc();
  const before = process.memoryUsage().heapUsed;
  let parked = 0;
  const allParked = new Promise<void>((resolve) => {
    store.events.on('task:transition', ({ to }) => {
      if (to === 'input_required' && ++parked === count) resolve();
    });
  });
  for (let i = 0; i < count; i += 1)
    await runtime.createTask({ tool: 'park', arguments: { i }, principal: 'bench' });
  await allParked;
  gc();
  const perTask = (process.memoryUsage().heapUsed - before) / count;
  await runtime.stop();
  await store.close();
  return perTask;
}

const store: TaskStore =
  kind === 'sqlite' ? new SqliteTaskStore(join(dir, 'tasks.db')) : new MemoryTaskStore();
const bytesPerTask = await heapPerParkedTask(store);
rmSync(dir, { recursive: true, force: true });
process.stdout.write(`${JSON.stringify({ bytesPerTask })}\n`);
