import { existsSync } from 'node:fs';
import type { TaskServer } from '../../../src/server/index.js';
import registerDemo from '../../../src/server/tools/demo.js';
import { registerConfirmStep } from '../confirm-step.js';

/** The length of `big_result`'s text: far over Claude Code's 50,000-character cut-off. */
export const BIG_RESULT_CHARS = 400_000;
/** What `chatty_job` writes with ctx.output before it waits. */
export const OUTPUT_LINES = ['compiling 1/3\n', 'compiling 2/3\n', 'compiling 3/3\n'];

/** 400,000 characters, numbered every 100, so a slice shows where it came from. */
export function bigText(): string {
  const rows = BIG_RESULT_CHARS / 100;
  return Array.from(
    { length: rows },
    (_, i) => `row ${String(i).padStart(6, '0')} ${'x'.repeat(88)}\n`,
  ).join('');
}

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
  registerConfirmStep(app);
  app.tool(
    'big_result',
    { description: 'Returns a 400,000-character report.', task: true },
    async () => ({ content: [{ type: 'text', text: bigText() }] }),
  );
  app.tool(
    'chatty_job',
    {
      description: 'Writes three lines of output, then waits for its release file.',
      task: { mode: 'optional', pollIntervalMs: 200 },
    },
    async (args, ctx) => {
      for (const line of OUTPUT_LINES) await ctx.output(line);
      const release = String(args['release']);
      const deadline = Date.now() + 120_000;
      while (!existsSync(release) && Date.now() < deadline && !ctx.signal.aborted)
        await new Promise((resolve) => setTimeout(resolve, 100));
      return { content: [{ type: 'text', text: 'chatty job released' }] };
    },
  );
}
