/**
 * A user tools module. Compiled (`npm test` builds it to `.build/examples/custom-tools.js`),
 * it is served with `taskrail serve --tools .build/examples/custom-tools.js`.
 * The default export receives the server and registers tools on it.
 */
import * as z from 'zod/v4';
import type { TaskServer } from 'taskrail/server';

export default function register(app: TaskServer): void {
  app.tool(
    'count_words',
    {
      description: 'Counts the words of a text, one recorded step per paragraph.',
      inputSchema: z.object({ text: z.string() }),
      task: { mode: 'optional', pollIntervalMs: 100, ttlMs: 60 * 60 * 1000 },
    },
    async (args, ctx) => {
      const paragraphs = args.text.split(/\n\s*\n/);
      let total = 0;
      for (const [index, paragraph] of paragraphs.entries()) {
        ctx.signal.throwIfAborted();
        await ctx.progress({
          progress: index,
          total: paragraphs.length,
          message: `paragraph ${index + 1}`,
        });
        total += await ctx.step(`p${index}`, () => paragraph.split(/\s+/).filter(Boolean).length);
      }
      return {
        content: [{ type: 'text', text: `${total} words` }],
        structuredContent: { words: total },
      };
    },
  );
}
