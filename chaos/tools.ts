/**
 * The chaos run's tools (`serve --tools .build/chaos/tools.js`). Each result is a pure function
 * of the arguments, so the checker knows the one right answer for every task (see expect.ts).
 */
import { appendFileSync } from 'node:fs';
import * as z from 'zod/v4';
import type { TaskServer } from '../src/server/app.js';
import { sleep } from '../src/server/tools/sleep.js';
import { RPC, RpcError } from '../src/task/errors.js';
import { registerPolicyTools } from './policy-tools.js';
import { registerWakeupTools } from './wakeup-tools.js';

const args = z.object({ n: z.number(), ms: z.number() });
const task = { mode: 'required', pollIntervalMs: 100 } as const;
const text = (value: string) => ({ content: [{ type: 'text', text: value }] });

/**
 * One line per handler start, appended by whichever process runs it (O_APPEND keeps lines of
 * concurrent writers whole): the checker counts executions, not only final writes.
 */
function executed(taskId: string | undefined, tool: string): void {
  const file = process.env['CHAOS_EXEC_FILE'];
  if (file !== undefined && taskId !== undefined) appendFileSync(file, `${taskId} ${tool}\n`);
}

export default function register(app: TaskServer): void {
  app.tool('c_short', { description: 'quick', inputSchema: args, task }, async (a, ctx) => {
    executed(ctx.taskId, 'c_short');
    await sleep(Number(a['ms']), ctx.signal);
    return text(`short:${Number(a['n']) ** 2}`);
  });
  app.tool('c_long', { description: 'two halves', inputSchema: args, task }, async (a, ctx) => {
    executed(ctx.taskId, 'c_long');
    const half = Number(a['ms']) / 2;
    await ctx.step('first-half', async () => {
      await sleep(half, ctx.signal);
      return 1;
    });
    await sleep(half, ctx.signal);
    return text(`long:${Number(a['n']) + 1}`);
  });
  app.tool('c_ask', { description: 'parks', inputSchema: args, task }, async (a, ctx) => {
    executed(ctx.taskId, 'c_ask');
    await sleep(Number(a['ms']), ctx.signal);
    const answer = await ctx.elicit('v', {
      message: `n=${Number(a['n'])}`,
      requestedSchema: { type: 'object', properties: { v: { type: 'string' } } },
    });
    return text(`ask:${Number(a['n'])}:${String(answer.content?.['v'])}`);
  });
  app.tool('c_fail', { description: 'fails', inputSchema: args, task }, async (a, ctx) => {
    executed(ctx.taskId, 'c_fail');
    await sleep(Number(a['ms']), ctx.signal);
    throw new RpcError(RPC.INTERNAL_ERROR, `fail:${Number(a['n'])}`);
  });
  // Reports progress (a timer-driven store write) and must never start twice for one task.
  const once = { ...task, retry: false } as const;
  app.tool(
    'c_once',
    { description: 'at most once', inputSchema: args, task: once },
    async (a, ctx) => {
      executed(ctx.taskId, 'c_once');
      const steps = 4;
      for (let i = 1; i <= steps; i += 1) {
        await sleep(Number(a['ms']) / steps, ctx.signal);
        await ctx.progress({ progress: i, total: steps, message: `step ${i}` });
      }
      return text(`once:${Number(a['n'])}`);
    },
  );
  registerPolicyTools(app, executed);
  registerWakeupTools(app, executed);
}
