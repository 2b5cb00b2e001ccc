/**
 * The right end of each run-policy chaos task, from its seeded schedule of failures (its
 * arguments) and the tools' limits (chaos/policy-tools.ts). A crash takes an attempt too, so a
 * task that ran out of attempts by crashes may end "interrupted" instead; a `retry: false` task
 * that crashed mid-run must.
 */
import type { TaskRecord } from '../src/task/record.js';
import { POLICY } from './policy-tools.js';
import type { Final, PolicyKind, Spec } from './spec.js';

export type { PolicyKind } from './spec.js';

export const POLICY_TOOL: Record<PolicyKind, string> = {
  flaky: 'p_flaky',
  slow: 'p_slow',
  oncep: 'p_once',
  nap: 'p_nap',
  keyed: 'p_keyed',
};

/** The longest planned `p_keyed` run (ms): a killed one is taken to last this long at most. */
export const KEYED_LONGEST_MS = 900;

/** A woken sleep may end this early by the wake estimate's error (clocks of one machine). */
const EARLY_MS = 250;

const n = (task: TaskRecord) => Number(task.arguments['n']);
const interrupted = (final: Final) =>
  final.status === 'failed' && (final.error ?? '').includes('interrupted');

/** The text of a completion on attempt `a` (`flaky:7:3`), when `a` is within the schedule. */
function completedAfter(prefix: string, final: Final, fails: number, max: number): boolean {
  const match = new RegExp(`^${prefix}:(\\d+)$`).exec(final.text ?? '');
  const attempt = Number(match?.[1]);
  return final.status === 'completed' && attempt > fails && attempt <= max;
}

function retried(prefix: string, task: TaskRecord, final: Final, max: number, why: string) {
  const fails = Number(task.arguments['fails']);
  if (interrupted(final)) return true;
  if (fails >= max) return final.status === 'failed' && (final.error ?? '').includes(why);
  return completedAfter(`${prefix}:${Number(task.arguments['n'])}`, final, fails, max);
}

function once(task: TaskRecord, final: Final): boolean {
  if (interrupted(final)) return true;
  const fate = Number(task.arguments['fate']);
  if (fate === 0)
    return final.status === 'completed' && final.text === `oncep:${task.arguments['n']}`;
  const why = fate === 1 ? "Internal error in tool 'p_once'" : 'timed out';
  return final.status === 'failed' && (final.error ?? '').includes(why);
}

/** Completed, and not before its sleep was over (judged from the record's own times). */
function napped(task: TaskRecord, final: Final): boolean {
  if (interrupted(final)) return true;
  const slept = task.updatedAt - task.createdAt >= Number(task.arguments['ms']) - EARLY_MS;
  return final.status === 'completed' && final.text === `nap:${task.arguments['n']}` && slept;
}

/** Whether `final` is a right end of a policy tool's task; undefined for another tool. */
export function isRightPolicy(task: TaskRecord, final: Final): boolean | undefined {
  switch (task.tool) {
    case 'p_flaky':
      return retried(
        'flaky',
        task,
        final,
        POLICY.flaky.maxAttempts,
        "Internal error in tool 'p_flaky'",
      );
    case 'p_slow':
      return retried('slow', task, final, POLICY.slow.maxAttempts, 'timed out');
    case 'p_once':
      return once(task, final);
    case 'p_nap':
      return napped(task, final);
    case 'p_keyed':
      return (
        interrupted(final) || (final.status === 'completed' && final.text === `keyed:${n(task)}`)
      );
    default:
      return undefined;
  }
}

/** A plan of policy tasks: each with its failures drawn from the seeded `random`. */
export function policyPlan(random: () => number, first: number, count: number): Spec[] {
  const kinds: PolicyKind[] = ['flaky', 'flaky', 'slow', 'oncep', 'oncep', 'nap', 'keyed', 'keyed'];
  const upTo = (max: number) => Math.floor(random() * (max + 1));
  return Array.from({ length: count }, (_, i): Spec => {
    const kind = kinds[Math.floor(random() * kinds.length)] as PolicyKind;
    const n = first + i;
    const quick = Math.round(20 + random() * 180);
    if (kind === 'nap') return { n, kind, ms: Math.round(500 + random() * 2500) };
    if (kind === 'keyed') {
      return {
        n,
        kind,
        ms: Math.round(200 + random() * (KEYED_LONGEST_MS - 200)),
        args: { account: upTo(2) },
      };
    }
    if (kind === 'oncep') return { n, kind, ms: quick, args: { fate: upTo(2) } };
    const max = kind === 'flaky' ? POLICY.flaky.maxAttempts : POLICY.slow.maxAttempts;
    // Mostly recoverable; one in five runs out of attempts.
    const fails = random() < 0.2 ? max : upTo(max - 1);
    return { n, kind, ms: quick, args: { fails, deaf: random() < 0.5 ? 1 : 0 } };
  });
}

/** How the policy tasks ended, so a run shows the paths it took (a line of the chaos log). */
export function describePolicyEnds(tasks: TaskRecord[]): string {
  const tally = new Map<string, number>();
  const add = (key: string) => tally.set(key, (tally.get(key) ?? 0) + 1);
  for (const task of tasks) {
    if (!task.tool.startsWith('p_')) continue;
    const error = task.error?.message ?? '';
    const how = error.includes('interrupted')
      ? 'interrupted'
      : error.includes('timed out')
        ? 'timed out'
        : task.status === 'failed'
          ? 'failed'
          : task.status === 'completed' && task.attempt > 1
            ? `completed on a later attempt`
            : task.status;
    add(`${task.tool} ${how}`);
  }
  return [...tally]
    .sort()
    .map(([key, count]) => `${key} ${count}`)
    .join(', ');
}
