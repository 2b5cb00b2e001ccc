/**
 * The wake-up chaos phases' tools (chaos/wakeup-phase.ts): durable sleeps that are cancelled,
 * that outlive their task's ttl, and a `retry: false` one that sleeps and then completes.
 */
import * as z from 'zod/v4';
import type { TaskServer } from '../src/server/app.js';

const text = (value: string) => ({ content: [{ type: 'text', text: value }] });
const base = { mode: 'required', pollIntervalMs: 100 } as const;
const napping = z.object({ n: z.number(), ms: z.number() });

/** The limits the checker judges by. */
export const WAKE = {
  /** `w_fade`'s ttl: it sleeps far longer, so it expires asleep and is swept. */
  fadeTtlMs: 4000,
} as const;

export function registerWakeupTools(
  app: TaskServer,
  executed: (taskId: string | undefined, tool: string) => void,
): void {
  const sleeper = (name: string, task: object) =>
    app.tool(
      name,
      { description: 'sleeps durably', inputSchema: napping, task: { ...base, ...task } },
      async (a, ctx) => {
        // Logged in a step: the run after the wake replays it, a second execution does not.
        await ctx.step('start', () => executed(ctx.taskId, name));
        await ctx.sleep(Number(a['ms']));
        return text(`${name}:${Number(a['n'])}`);
      },
    );
  sleeper('w_doze', {});
  sleeper('w_fade', { ttlMs: WAKE.fadeTtlMs });
  sleeper('w_once_nap', { retry: false });
}
