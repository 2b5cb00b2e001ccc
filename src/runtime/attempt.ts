import { RPC, protocolErrorObject, type JsonRpcErrorObject } from '../task/errors.js';
import type { TaskRecord } from '../task/record.js';
import { stopReasons } from './abort-reasons.js';
import type { RunContext } from './context.js';
import type { RunState } from './durable-backend.js';
import { waitDurably, type WaitingRun } from './durable-wait.js';
import { noteFencedOut } from './fence.js';
import { errorObject, finish } from './outcome.js';
import {
  afterFailure,
  retryStatusMessage,
  runPolicyOf,
  sleepStatusMessage,
  type FailureKind,
} from './run-policy.js';
import { observe, type RunnerSettings } from './runner-settings.js';
import type { RunnableTool, ToolResult } from './tool.js';
import { setLongTimeout, type LongTimeout } from '../task/timers.js';

export type Settled = { returned: ToolResult } | { threw: unknown } | { timedOut: number };

/**
 * Runs the handler, within the tool's `timeoutMs` if it has one. At the limit the run is closed
 * (nothing the handler does later is written) and its signal aborts, and this resolves at once:
 * the caller gives the slot back although the handler may go on until it returns.
 */
export async function settleAttempt(
  tool: RunnableTool,
  task: TaskRecord,
  context: RunContext,
  run: RunState,
  timeoutMs: number | undefined,
): Promise<Settled> {
  const handled = Promise.resolve()
    .then(() => tool.handler(task.arguments, context))
    .then(
      (returned): Settled => ({ returned }),
      (threw: unknown): Settled => ({ threw }),
    );
  if (timeoutMs === undefined) return handled;
  let timer: LongTimeout | undefined;
  const limit = new Promise<Settled>((resolve) => {
    timer = setLongTimeout(() => resolve({ timedOut: timeoutMs }), timeoutMs);
  });
  const settled = await Promise.race([handled, limit]);
  timer?.clear();
  if ('timedOut' in settled) {
    run.closed = true; // before the abort: a listener of the signal must not write either
    run.abort.abort(stopReasons.timedOut(timeoutMs));
  }
  return settled;
}

export function timedOutError(tool: string, limitMs: number): JsonRpcErrorObject {
  return {
    code: RPC.INTERNAL_ERROR,
    message: `Tool '${tool}' timed out after ${limitMs} ms (its timeoutMs); the attempt was abandoned`,
  };
}

/** A run's end the runner understands: no lease left, handed back, or abandoned. */
export type AttemptEnd = 'rested' | 'release' | 'abandon';

/**
 * An attempt that threw or timed out: re-run after a durable backoff wait when the policy says
 * so (`retry.onError`, attempts left, not a protocol error), else the task fails with the error.
 */
export async function endFailedAttempt(
  settings: RunnerSettings,
  waiting: WaitingRun,
  run: RunState,
  failure: { threw: unknown } | { timedOut: number },
): Promise<AttemptEnd> {
  const task = waiting.latest;
  const tool = settings.tools.get(task.tool) as RunnableTool;
  const policy = runPolicyOf(tool.task, settings.maxAttempts);
  const { error, kind } = describeFailure(settings, task, failure);
  const next = afterFailure(policy, waiting.attempt, kind);
  if (next.retry && policy.retry !== false) {
    const maxAttempts = policy.retry.maxAttempts;
    observe(settings, (o) => o.retrying?.(task.tool, kind === 'timed-out' ? 'timeout' : 'error'));
    settings.logger.warn('attempt failed; retrying after a backoff wait', {
      taskId: task.id,
      attempt: waiting.attempt,
      delayMs: next.delayMs,
    });
    return waitDurably(settings, waiting, {
      delayMs: next.delayMs,
      nextAttempt: next.nextAttempt,
      statusMessage: (wakeAt) =>
        retryStatusMessage(next.nextAttempt, maxAttempts, wakeAt, error.message),
    });
  }
  const written = await finish(
    settings,
    task.id,
    { error },
    { latest: task, attempt: waiting.attempt, giveUp: () => run.leaseLost, fence: run.fence },
  );
  if (written === 'fenced') noteFencedOut(settings.logger, task.id, run);
  if (written === 'rested' || written === 'fenced') return 'rested';
  return written === 'unwritten' ? 'abandon' : 'release';
}

function describeFailure(
  settings: RunnerSettings,
  task: TaskRecord,
  failure: { threw: unknown } | { timedOut: number },
): { error: JsonRpcErrorObject; kind: FailureKind } {
  if ('timedOut' in failure) {
    observe(settings, (o) => o.attemptTimedOut?.(task.tool));
    settings.logger.warn('attempt timed out; its slot is given back', {
      taskId: task.id,
      timeoutMs: failure.timedOut,
    });
    return { error: timedOutError(task.tool, failure.timedOut), kind: 'timed-out' };
  }
  const final = protocolErrorObject(failure.threw) !== undefined;
  return { error: errorObject(settings, task, failure.threw), kind: final ? 'final' : 'threw' };
}

/** A run that called `ctx.sleep`: it waits durably, keeping its attempt. */
export function sleepDurably(
  settings: RunnerSettings,
  waiting: WaitingRun,
  delayMs: number,
): Promise<AttemptEnd> {
  return waitDurably(settings, waiting, { delayMs, statusMessage: sleepStatusMessage });
}
