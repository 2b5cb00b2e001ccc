/**
 * Tools for the Postgres HTTP benchmarks (postgres-pickup, -e2e, -scaling) (`--tools .build/bench/lib/pg-tools.js`): the shared bench
 * tools, plus one that reports when its handler started and one that burns 1 ms of CPU.
 */
import type { TaskServer } from '../../src/server/app.js';
import registerShared from './tools.js';

const FAST = { pollIntervalMs: 1 };

/** Wall-clock time with sub-millisecond resolution, comparable across processes. */
export const wallNow = (): number => performance.timeOrigin + performance.now();

export default function register(app: TaskServer): void {
  registerShared(app);
  app.tool(
    'started_at',
    { description: 'returns when its handler started', task: { mode: 'required', ...FAST } },
    () => ({ content: [{ type: 'text', text: String(wallNow()) }] }),
  );
  app.tool(
    'cpu_1ms',
    { description: 'uses 1 ms of CPU', task: { mode: 'required', pollIntervalMs: 20 } },
    () => {
      const until = performance.now() + 1;
      while (performance.now() < until);
      return { content: [] };
    },
  );
}
