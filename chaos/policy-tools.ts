/**
 * The chaos run's run-policy tools: time-outs (some handlers ignore their signal), retries with
 * durable backoff after transient errors, a `retry: false` tool that throws or times out, and
 * `ctx.sleep`. Each fails on a schedule given in its arguments (`fails`: the attempts that
 * fail), so the checker knows every task's right end (chaos/policy-expect.ts).
 */
import { appendFileSync } from 'node:fs';
import * as z from 'zod/v4';
import type { TaskServer } from '../src/server/app.js';
import { sleep } from '../src/server/tools/sleep.js';

const text = (value: string) => ({ content: [{ type: 'text', text: value }] });
const base = { mode: 'required', pollIntervalMs: 100 } as const;

/** The limits the checker judges by: kept here, beside the tools that use them. */
export const POLICY = {
  flaky: { maxAttempts: 4, onError: true, backoffMs: 300, backoffFactor: 2, maxBackoffMs: 1500 },
  slow: { maxAttempts: 3, onError: true, backoffMs: 200 },
  timeoutMs: 400,
  /** `p_keyed`: at most this many attempts per account at once. */
  keyedLimit: 2,
} as const;

/** Where `p_keyed` logs each run's start and end by key, to measure the overlap. */
export const permitJournal = (execFile: string) => `${execFile}.permits`;

const scheduled = z.object({ n: z.number(), ms: z.number(), fails: z.number(), deaf: z.number() });
const fated = z.object({ n: z.number(), ms: z.number(), fate: z.number() });
const napping = z.object({ n: z.number(), ms: z.number() });
const keyed = z.object({ n: z.number(), ms: z.number(), account: z.number() });
const accountOf = (args: Record<string, unknown>) => `acct-${Number(args['account'])}`;

/** A handler past its time-out: one that honours its signal, or one that ignores it. */
async function overrun(deaf: boolean, signal: AbortSignal): Promise<void> {
  if (deaf) await sleep(POLICY.timeoutMs * 3);
  else await sleep(POLICY.timeoutMs * 10, signal);
}

export function registerPolicyTools(
  app: TaskServer,
  executed: (taskId: string | undefined, tool: string) => void,
): void {
  app.tool(
    'p_flaky',
    {
      description: 'transient errors',
      inputSchema: scheduled,
      task: { ...base, retry: POLICY.flaky },
    },
    async (a, ctx) => {
      executed(ctx.taskId, 'p_flaky');
      await sleep(Number(a['ms']), ctx.signal);
      if (ctx.attempt <= Number(a['fails'])) throw new Error(`503 on attempt ${ctx.attempt}`);
      return text(`flaky:${Number(a['n'])}:${ctx.attempt}`);
    },
  );
  const slow = { ...base, timeoutMs: POLICY.timeoutMs, retry: POLICY.slow };
  app.tool(
    'p_slow',
    { description: 'times out', inputSchema: scheduled, task: slow },
    async (a, ctx) => {
      executed(ctx.taskId, 'p_slow');
      if (ctx.attempt <= Number(a['fails'])) await overrun(a['deaf'] === 1, ctx.signal);
      await sleep(Number(a['ms']), ctx.signal);
      return text(`slow:${Number(a['n'])}:${ctx.attempt}`);
    },
  );
  const once = { ...base, timeoutMs: POLICY.timeoutMs, retry: false } as const;
  app.tool(
    'p_once',
    { description: 'at most once, may throw or time out', inputSchema: fated, task: once },
    async (a, ctx) => {
      executed(ctx.taskId, 'p_once');
      await sleep(Number(a['ms']), ctx.signal);
      if (a['fate'] === 1) throw new Error('the payment provider refused');
      if (a['fate'] === 2) await overrun(true, ctx.signal);
      return text(`oncep:${Number(a['n'])}`);
    },
  );
  registerKeyedTool(app, executed);
  app.tool(
    'p_nap',
    { description: 'sleeps durably', inputSchema: napping, task: base },
    async (a, ctx) => {
      executed(ctx.taskId, 'p_nap');
      const before = await ctx.step('before', () => Number(a['n']));
      await ctx.sleep(Number(a['ms']));
      return text(`nap:${before}`);
    },
  );
}

/** One `taskId start|end key epochMs` line, appended (whole lines across processes). */
function journal(taskId: string | undefined, edge: 'start' | 'end', key: string): void {
  const file = process.env['CHAOS_EXEC_FILE'];
  if (file === undefined || taskId === undefined) return;
  appendFileSync(permitJournal(file), `${taskId} ${edge} ${key} ${Date.now()}\n`);
}

function registerKeyedTool(
  app: TaskServer,
  executed: (taskId: string | undefined, tool: string) => void,
): void {
  const concurrency = { limit: POLICY.keyedLimit, key: accountOf };
  app.tool(
    'p_keyed',
    { description: 'per-account limit', inputSchema: keyed, task: { ...base, concurrency } },
    async (a, ctx) => {
      executed(ctx.taskId, 'p_keyed');
      journal(ctx.taskId, 'start', accountOf(a));
      try {
        await sleep(Number(a['ms']), ctx.signal);
      } finally {
        journal(ctx.taskId, 'end', accountOf(a));
      }
      return text(`keyed:${Number(a['n'])}`);
    },
  );
}
