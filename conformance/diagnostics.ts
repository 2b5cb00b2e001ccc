import type { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod/v4';
import type { TaskServer } from '../src/server/app.js';
import { sleep, text } from '../src/server/tools/sleep.js';

/** Fixtures that need the raw SDK context (progress tokens, notifications). */
export function registerDiagnosticTools(mcp: McpServer): void {
  mcp.registerTool(
    'test_tool_with_progress',
    { description: 'Reports progress 0, 50 and 100 of 100.', inputSchema: z.object({}) },
    async (_args, ctx) => {
      const token = (ctx.mcpReq._meta as { progressToken?: string | number } | undefined)
        ?.progressToken;
      for (const progress of [0, 50, 100]) {
        if (token !== undefined) {
          await ctx.mcpReq.notify({
            method: 'notifications/progress',
            params: {
              progressToken: token,
              progress,
              total: 100,
              message: `Completed step ${progress} of 100`,
            },
          });
        }
        if (progress < 100) await sleep(50);
      }
      return { content: [text(String(token ?? 'no progress token'))] };
    },
  );
}

/** The 2026-07-28 `server-stateless` diagnostic hooks. */
export function registerStatelessDiagnostics(app: TaskServer): void {
  app.tool(
    'test_missing_capability',
    {
      description: 'Needs the sampling capability; without it the call is refused with -32021.',
      requiredClientCapabilities: { sampling: {} },
    },
    () => ({ content: [text('The client declared sampling.')] }),
  );
  app.tool(
    'test_streaming_elicitation',
    { description: 'Asks for input through an InputRequiredResult, never a server request.' },
    async (_args, ctx) => {
      const answer = await ctx.elicit('details', {
        message: 'Please provide details',
        requestedSchema: {
          type: 'object',
          properties: { details: { type: 'string' } },
          required: ['details'],
        },
      });
      return { content: [text(`Received: ${JSON.stringify(answer.content ?? {})}`)] };
    },
  );
  app.tool(
    'test_logging_tool',
    { description: 'Logs only when the request sets a log level (it never does here).' },
    () => ({
      content: [text('Logging tool finished.')],
    }),
  );
  app.tool(
    'test_trigger_tool_change',
    { description: 'Publishes notifications/tools/list_changed.' },
    () => {
      app.notify.toolsChanged();
      return { content: [text('Tool list change published.')] };
    },
  );
  app.tool(
    'test_trigger_prompt_change',
    { description: 'Publishes notifications/prompts/list_changed.' },
    () => {
      app.notify.promptsChanged();
      return { content: [text('Prompt list change published.')] };
    },
  );
}
