import type { TaskServer } from '../../src/server/index.js';

/**
 * `confirm_step`, the hosts' question tool: asks to proceed (a boolean form) and says what the
 * answer was, so a host's transcript shows whether it answered, declined or cancelled.
 */
export function registerConfirmStep(app: TaskServer): void {
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
}
