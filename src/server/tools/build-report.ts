import * as z from 'zod/v4';
import type { TaskServer } from '../index.js';
import { sleep, text } from './sleep.js';

const SECTION_MS = 400;

/**
 * A realistic long job: each section is a recorded step (a re-run after a crash skips finished
 * ones), progress shows in `statusMessage`, and the audience is asked for midway.
 */
export function registerBuildReport(app: TaskServer): void {
  app.tool(
    'build_report',
    {
      title: 'Build a report',
      description:
        'Researches a topic section by section, asks who the report is for, then writes it.',
      inputSchema: z.object({
        topic: z.string().min(1),
        sections: z.number().int().min(1).max(10).default(3),
      }),
      task: { mode: 'optional', pollIntervalMs: 500, ttlMs: 24 * 60 * 60 * 1000 },
    },
    async (args, ctx) => {
      const { topic, sections: total } = args;
      const notes: string[] = [];
      for (let i = 1; i <= total; i++) {
        await ctx.progress({
          progress: i - 1,
          total: total + 1,
          message: `researching section ${i}/${total}`,
        });
        notes.push(
          await ctx.step(`research-${i}`, async () => {
            await sleep(SECTION_MS, ctx.signal);
            return `Section ${i}: findings about ${topic}.`;
          }),
        );
      }
      const audience = await ctx.elicit('audience', {
        message: `Who is the report on "${topic}" for?`,
        requestedSchema: {
          type: 'object',
          properties: {
            audience: { type: 'string', enum: ['executives', 'engineers', 'everyone'] },
          },
          required: ['audience'],
        },
      });
      const reader =
        audience.action === 'accept'
          ? String(audience.content?.['audience'] ?? 'everyone')
          : 'everyone';
      await ctx.progress({ progress: total, total: total + 1, message: `writing for ${reader}` });
      await sleep(SECTION_MS, ctx.signal);
      const report = [`Report on ${topic} (for ${reader})`, ...notes].join('\n');
      return {
        content: [text(report)],
        // The report itself too: Claude Code shows the model only structuredContent.
        structuredContent: { topic, audience: reader, sections: total, report },
      };
    },
  );
}
