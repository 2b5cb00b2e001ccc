import type { TaskServer } from '../../../src/server/index.js';
import registerDemo from '../../../src/server/tools/demo.js';
import { sleep } from '../../../src/server/tools/sleep.js';

/**
 * The demo tools (greet, slow_compute, big_dump, build_report, …) plus two for the rows the
 * demo does not show plainly: a question whose answer the result names, and a tool that must
 * run as a task (Copilot `--experimental`). Loaded by `taskrail serve --tools` from .build.
 */
export default function register(app: TaskServer): void {
  registerDemo(app);
  app.tool(
    'confirm_step',
    {
      description: 'Asks the user to confirm before going on; says what the answer was.',
      task: { mode: 'optional', pollIntervalMs: 200 },
    },
    async (_args, ctx) => {
      const answer = await ctx.elicit('go', {
        message: 'Proceed with the migration?',
        requestedSchema: {
          type: 'object',
          properties: { proceed: { type: 'boolean', title: 'Proceed' } },
          required: ['proceed'],
        },
      });
      const proceed = answer.action === 'accept' && answer.content?.['proceed'] === true;
      return { content: [{ type: 'text', text: `answer ${answer.action} proceed=${proceed}` }] };
    },
  );
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
