/**
 * Child process of the engine benchmark: a started runtime on a fresh SQLite file and nothing
 * else, so the CPU it reports is the runtime's own and not the garbage of earlier measurements.
 * Prints `{"cpuMs": …}` for the `seconds` (argv[2]) after a settling period; with `baseline`
 * (argv[3]) the runtime is built but not started.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskRuntime } from '../../src/runtime/runtime.js';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import { gc } from './stats.js';

const seconds = Number(process.argv[2] ?? 10);
// `baseline`: the same process and imports without a started runtime (node's own idle work).
const started = process.argv[3] !== 'baseline';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const dir = mkdtempSync(join(tmpdir(), 'taskrail-bench-idle-'));
const store = new SqliteTaskStore(join(dir, 'tasks.db'));
const silent = { info() {}, warn() {}, error() {} };
const runtime = new TaskRuntime({ store, tools: { get: () => undefined }, logger: silent });
if (started) runtime.start();
await sleep(1000); // start-up: module compilation, the first recovery scan
gc(); // collect start-up garbage now, not during the measurement
const before = process.cpuUsage();
await sleep(seconds * 1000);
const used = process.cpuUsage(before);
await runtime.stop();
await store.close();
rmSync(dir, { recursive: true, force: true });
process.stdout.write(`${JSON.stringify({ cpuMs: (used.user + used.system) / 1000 })}\n`);
