/**
 * The SQLite side of `_lifecycle-cost.ts`: TASKS lifecycles (create → run → complete, a no-op
 * tool) in one process on a fresh database file. Run it under strace to count what the disk
 * sees per task, e.g.
 *   strace -f -c -e trace=fsync,fdatasync,pwrite64 node .build/bench/lib/lifecycle-cost-sqlite.js
 * SYNCHRONOUS=full picks `?synchronous=full`. Prints the file's size and time per task.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolCatalog } from '../../src/runtime/api.js';
import { TaskRuntime } from '../../src/runtime/runtime.js';
import { openStore } from '../../src/stores/open.js';
import { isTerminal } from '../../src/task/status.js';

const TASKS = Number(process.env['TASKS'] ?? 1000);
const synchronous = process.env['SYNCHRONOUS'] === 'full' ? '?synchronous=full' : '';
const catalog: ToolCatalog = {
  get: (name) =>
    name === 'noop'
      ? { name, task: { mode: 'optional' }, handler: () => ({ content: [] }) }
      : undefined,
};
const dir = mkdtempSync(join(tmpdir(), 'taskrail-cost-'));
const file = join(dir, 'tasks.db');
const store = await openStore(`sqlite:${file}${synchronous}`);
const runtime = new TaskRuntime({
  store,
  tools: catalog,
  logger: { info() {}, warn() {}, error() {} },
});
runtime.start();
const started = Date.now();
for (let i = 0; i < TASKS; i++) {
  const done = new Promise<void>((resolve) => {
    const off = store.events.on('task:transition', ({ to }) => {
      if (!isTerminal(to)) return;
      off();
      resolve();
    });
  });
  await runtime.createTask({ tool: 'noop', arguments: {}, principal: 'alice' });
  await done;
}
const ms = Date.now() - started;
await runtime.stop(1000);
await store.close();
const bytes = ['', '-wal'].reduce((sum, end) => {
  try {
    return sum + statSync(file + end).size;
  } catch {
    return sum;
  }
}, 0);
console.log(
  JSON.stringify({ tasks: TASKS, msPerTask: ms / TASKS, fileBytesPerTask: bytes / TASKS }),
);
rmSync(dir, { recursive: true, force: true });
