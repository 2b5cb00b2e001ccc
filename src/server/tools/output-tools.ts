import * as z from 'zod/v4';
import type { TaskServer } from '../index.js';
import { sleep, text } from './sleep.js';

/**
 * Two demo tools for results of any size: `stream_log` prints a log while it runs
 * (`taskrail://tasks/ID/output`), `big_dump` returns a result too big to hand out whole
 * (shortened, with a link to read the rest).
 */
export function registerOutputTools(app: TaskServer): void {
  app.tool(
    'stream_log',
    {
      description:
        'Prints `lines` log lines over `seconds` as output while it runs (read or subscribe to taskrail://tasks/ID/output), then sums up.',
      inputSchema: z.object({
        lines: z.number().int().min(1).max(100_000).optional(),
        seconds: z.number().min(0).max(3600).optional(),
      }),
      task: { mode: 'optional', pollIntervalMs: 500 },
    },
    async (args, ctx) => {
      const lines = args.lines ?? 20;
      const pause = ((args.seconds ?? 5) * 1000) / lines;
      for (let i = 1; i <= lines; i++) {
        await ctx.output(`[${new Date().toISOString()}] step ${i}/${lines}: ok\n`);
        if (pause > 0) await sleep(pause, ctx.signal);
      }
      return { content: [text(`Printed ${lines} line(s) of output.`)] };
    },
  );
  app.tool(
    'big_dump',
    {
      description:
        'Returns a report of `chars` characters (default 200,000): handed out shortened, the whole readable as taskrail://tasks/ID/result.',
      inputSchema: z.object({ chars: z.number().int().min(1).max(20_000_000).optional() }),
      task: { mode: 'optional', pollIntervalMs: 500 },
    },
    (args) => {
      const chars = args.chars ?? 200_000;
      const rows: string[] = [];
      let length = 0;
      for (let i = 1; length < chars; i++) {
        const row = `row ${i}: value=${(i * 7919) % 10_007}\n`;
        rows.push(row);
        length += row.length;
      }
      return { content: [text(rows.join('').slice(0, chars))] };
    },
  );
}
