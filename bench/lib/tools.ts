/**
 * The taskrail side of the HTTP benchmarks, loaded with `serve --tools .build/bench/lib/tools.js`
 * (and `worker --tools`): a no-op, a 10 ms tool, an I/O-bound wait and a CPU-bound burn.
 */
import * as z from 'zod/v4';
import type { TaskServer } from '../../src/server/app.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const FAST = { pollIntervalMs: 1 };

export default function register(app: TaskServer): void {
  app.tool('noop', { description: 'does nothing', task: { mode: 'optional', ...FAST } }, () => ({
    content: [],
  }));
  app.tool(
    'ten_ms',
    { description: 'waits 10 ms', task: { mode: 'optional', ...FAST } },
    async () => {
      await sleep(10);
      return { content: [] };
    },
  );
  app.tool(
    'io_wait',
    {
      description: 'waits `ms` (an I/O-bound job)',
      inputSchema: z.object({ ms: z.number() }),
      task: { mode: 'required', pollIntervalMs: 20 },
    },
    async (args) => {
      await sleep(Number(args['ms']));
      return { content: [] };
    },
  );
  app.tool(
    'cpu_burn',
    {
      description: 'keeps the CPU busy for `ms` (a CPU-bound job)',
      inputSchema: z.object({ ms: z.number() }),
      task: { mode: 'required', pollIntervalMs: 20 },
    },
    (args) => {
      const until = performance.now() + Number(args['ms']);
      while (performance.now() < until) {
        // burning CPU is the job
      }
      return { content: [] };
    },
  );
}
