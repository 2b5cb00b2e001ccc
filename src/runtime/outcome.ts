import {
  RPC,
  isStoreUnavailable,
  protocolErrorObject,
  type JsonRpcErrorObject,
} from '../task/errors.js';
import type { WriteFence } from '../store/port.js';
import type { JsonObject, TaskRecord } from '../task/record.js';
import * as t from '../task/transitions.js';
import { isFencedOut } from './fence.js';
import { jsonSize, resultTooLarge } from './limits.js';
import { runPolicyOf } from './run-policy.js';
import type { RunnerSettings } from './runner-settings.js';
import { describeError, withStoreRetry } from './store-health.js';
import type { RunnableTool, ToolResult } from './tool.js';
import { updateTask } from './writes.js';

export type Outcome = { result: JsonObject } | { error: JsonRpcErrorObject };

export function outcomeOfResult(result: ToolResult, limit: number): Outcome {
  if (result === null || typeof result !== 'object') {
    return { error: { code: RPC.INTERNAL_ERROR, message: 'the tool returned no result object' } };
  }
  const size = jsonSize(result);
  if (size > limit) return { error: resultTooLarge(size, limit).toJSON() };
  return { result: { ...result } };
}

/**
 * A protocol error (taskrail's RpcError, the SDK's ProtocolError) keeps its code and message;
 * anything else becomes -32603 with a safe message, the detail going to the log.
 */
export function errorObject(
  settings: RunnerSettings,
  task: TaskRecord,
  error: unknown,
): JsonRpcErrorObject {
  const wire = protocolErrorObject(error);
  if (wire !== undefined) return wire;
  settings.logger.error('tool handler threw', {
    taskId: task.id,
    tool: task.tool,
    error: error instanceof Error ? (error.stack ?? error.message) : String(error),
  });
  return { code: RPC.INTERNAL_ERROR, message: `Internal error in tool '${task.tool}'` };
}

export function interruptionRefusal(
  tool: RunnableTool,
  task: TaskRecord,
  defaultMaxAttempts: number,
): string | undefined {
  const { retry } = runPolicyOf(tool.task, defaultMaxAttempts);
  if (retry === false) {
    return `Task interrupted: the process running it stopped, and tool '${task.tool}' is not safe to re-run.`;
  }
  const { maxAttempts } = retry;
  if (task.attempt >= maxAttempts) {
    return `Task interrupted ${task.attempt} time(s); giving up after ${maxAttempts} attempts.`;
  }
  return undefined;
}

export interface FinishOptions {
  /** The runner's latest copy, to skip a read. */
  latest?: TaskRecord;
  /** Write only while the task is still on this attempt: a re-claim after a lost lease wins. */
  attempt?: number;
  /** Stop retrying through store trouble when this says so (the lease is known lost). */
  giveUp?: () => boolean;
  /** The attempt's lease: the outcome lands only while it still holds the task. */
  fence?: WriteFence;
}

export type FinishResult = 'rested' | 'working' | 'unwritten' | 'fenced';

/**
 * The terminal write, retried with backoff through store trouble (a lock, an outage) so a
 * finished handler's outcome is neither lost nor turned into a failure. Loses quietly to a task
 * that is already terminal (e.g. cancelled) or was re-claimed. Resolves 'rested' when the task
 * is no longer `working` (so it holds no lease), 'working' when it still is, 'unwritten' when
 * the store stayed unavailable past the budget, 'fenced' when the store refused the write
 * because another attempt holds the task (the caller stops: the lease is not its own).
 */
export async function finish(
  settings: RunnerSettings,
  taskId: string,
  outcome: Outcome,
  options: FinishOptions = {},
): Promise<FinishResult> {
  const change = (current: TaskRecord): TaskRecord | undefined => {
    if (options.attempt !== undefined && current.attempt !== options.attempt) return undefined;
    const now = settings.clock();
    return 'result' in outcome
      ? t.complete(current, outcome.result, now)
      : t.fail(current, outcome.error, now);
  };
  let from = options.latest;
  try {
    const written = await withStoreRetry(
      async () => {
        // Plain literals: a conditional spread builds each object through V8's slow path.
        const task = await updateTask(settings.store, taskId, change, {
          from,
          fence: options.fence,
        });
        from = undefined; // a retry re-reads: the copy may be stale by then
        return task;
      },
      {
        health: settings.health,
        operation: 'record outcome',
        budgetMs: settings.writeBudgetMs,
        giveUp: options.giveUp,
      },
    );
    return written === undefined || written.status !== 'working' ? 'rested' : 'working';
  } catch (error) {
    if (isFencedOut(error)) return 'fenced';
    if (!isStoreUnavailable(error)) throw error;
    settings.logger.error('could not record the outcome: the task store stayed unavailable', {
      taskId,
      error: describeError(error),
    });
    return 'unwritten';
  }
}
