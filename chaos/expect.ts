import type { TaskRecord } from '../src/task/record.js';
import { isRightPolicy, POLICY_TOOL } from './policy-expect.js';
import type { Final, Kind, Spec } from './spec.js';

export type { Final, Kind, Spec } from './spec.js';

export const TOOL: Record<Kind, string> = {
  short: 'c_short',
  long: 'c_long',
  ask: 'c_ask',
  fail: 'c_fail',
  cancel: 'c_long',
  once: 'c_once',
  ...POLICY_TOOL,
};

/** Tools declared `retry: false`: a second execution of one task is a failure of the run. */
export const AT_MOST_ONCE = new Set(['c_once', 'p_once']);

/** The answer the clients give to `c_ask` (the question says `n=N`). */
export const answerFor = (message: string): string => `v${message.replace(/^n=/, '')}`;

/** Whether `final` is a right end for `task` (its tool and arguments). */
export function isRight(task: TaskRecord, final: Final, cancellable: boolean): boolean {
  if (final.status === 'cancelled') return cancellable;
  const tool = task.tool;
  const n = Number(task.arguments['n']);
  switch (tool) {
    case 'c_short':
      return final.status === 'completed' && final.text === `short:${n * n}`;
    case 'c_long':
      return final.status === 'completed' && final.text === `long:${n + 1}`;
    case 'c_ask':
      return final.status === 'completed' && final.text === `ask:${n}:v${n}`;
    case 'c_once':
      // A crash mid-run may end it "interrupted"; it must never run twice (counted elsewhere).
      return (
        (final.status === 'completed' && final.text === `once:${n}`) ||
        (final.status === 'failed' && (final.error ?? '').includes('interrupted'))
      );
    case 'c_fail':
      return final.status === 'failed' && (final.error ?? '').includes(`fail:${n}`);
    default:
      return isRightPolicy(task, final) ?? false;
  }
}

/** Mulberry32: a small seeded PRNG, so a failing run can be replayed with its seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function plan(random: () => number, first: number, count: number): Spec[] {
  const kinds: Kind[] = ['short', 'short', 'long', 'ask', 'fail', 'cancel', 'once', 'once'];
  return Array.from({ length: count }, (_, i) => {
    const kind = kinds[Math.floor(random() * kinds.length)] as Kind;
    const ms =
      kind === 'long' || kind === 'once'
        ? 500 + random() * 2500
        : kind === 'cancel'
          ? 4000
          : 20 + random() * 200;
    const spec: Spec = { n: first + i, kind, ms: Math.round(ms) };
    if (kind === 'cancel') spec.cancelAfterMs = Math.round(100 + random() * 1500);
    return spec;
  });
}
