/**
 * Tools for the permits benchmark (`--tools .build/bench/lib/permit-tools.js`): one tool of
 * concurrency 1 that reports when its handler started and when it returned.
 */
import type { TaskServer } from '../../src/server/app.js';
import { wallNow } from './pg-tools.js';

export default function register(app: TaskServer): void {
  app.tool(
    'one_at_a_time',
    {
      description: 'runs 5 ms, one at a time; returns "<start> <end>"',
      task: { mode: 'required', pollIntervalMs: 5, concurrency: { limit: 1 } },
    },
    async () => {
      const start = wallNow();
      await new Promise((resolve) => setTimeout(resolve, 5));
      return { content: [{ type: 'text', text: `${start} ${wallNow()}` }] };
    },
  );
}
