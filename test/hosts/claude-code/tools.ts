import type { TaskServer } from '../../../src/server/index.js';
import registerDemo from '../../../src/server/tools/demo.js';

/** Tools for the Claude Code scenarios (loaded by `taskrail serve --tools` from .build). */
export default function register(app: TaskServer): void {
  registerDemo(app);
  app.tool(
    'structured_report',
    { description: 'Writes a short report; returns text and structuredContent.', task: true },
    async () => ({
      content: [{ type: 'text', text: 'Report: the launch is on track.' }],
      structuredContent: { topic: 'launch', verdict: 'on track' },
    }),
  );
  app.tool(
    'long_job',
    {
      description: 'A long job that takes `seconds` seconds.',
      task: { mode: 'optional', pollIntervalMs: 200 },
    },
    async (args, ctx) => {
      const seconds = Number(args['seconds'] ?? 5);
      await ctx.progress(`working (${seconds}s)`);
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, seconds * 1000);
        ctx.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(new Error('cancelled'));
        });
      });
      return { content: [{ type: 'text', text: `long job finished after ${seconds}s` }] };
    },
  );
  app.tool(
    'confirm_step',
    {
      description: 'Asks the user to confirm before going on.',
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
}
