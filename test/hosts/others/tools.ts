import type { TaskServer } from '../../../src/server/index.js';
import registerDemo from '../../../src/server/tools/demo.js';
import { registerConfirmStep } from '../confirm-step.js';
import { sleep } from '../../../src/server/tools/sleep.js';

/**
 * The demo tools (greet, slow_compute, big_dump, build_report, …) plus two for the rows the
 * demo does not show plainly: a question whose answer the result names, and a tool that must
 * run as a task (Copilot `--experimental`). Loaded by `taskrail serve --tools` from .build.
 */
export default function register(app: TaskServer): void {
  registerDemo(app);
  registerConfirmStep(app);
  app.tool(
    'required_compute',
    {
      description: 'Sleeps for `seconds`, then reports; always runs as a task.',
      task: { mode: 'required', pollIntervalMs: 500 },
    },
    async (args, ctx) => {
      const seconds = Number(args['seconds'] ?? 1);
      await ctx.progress(`computing (${seconds}s)`);
      await sleep(seconds * 1000, ctx.signal);
      return { content: [{ type: 'text', text: `Required task finished after ${seconds}s.` }] };
    },
  );
}
