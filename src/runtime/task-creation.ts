import { performance } from 'node:perf_hooks';
import type { CreateOutcome } from '../store/port.js';
import { RPC, RpcError } from '../task/errors.js';
import { merged } from '../task/copy.js';
import { newTaskId } from '../task/ids.js';
import {
  newTaskRecord,
  type JsonObject,
  type NewTaskInput,
  type TaskRecord,
} from '../task/record.js';
import { metaWithMaxAttempts } from '../task/run-meta.js';
import type { CreateTaskInput, DispatchHint, DispatchReason, Executor } from './api.js';
import { CONCURRENCY_KEY_META, concurrencyKeyOf, permitAskOf } from './concurrency.js';
import { assertIdempotencyKey, assertSameCall } from './idempotency.js';
import { assertArgumentsSize, resolveTtl, type TtlPolicy } from './limits.js';
import * as queueCap from './queue-cap.js';
import { maxAttemptsOf } from './run-policy.js';
import { startLeasedTask, type RunnerSettings } from './task-runner.js';
import type { RunnableTool } from './tool.js';
import { traced } from './tracing.js';

/** What creating a task needs of the runtime. */
export interface CreationContext {
  settings: RunnerSettings;
  executor: Executor | undefined;
  ttl: TtlPolicy;
  defaultPollIntervalMs: number;
  maxArgumentsBytes: number;
  maxQueuedPerPrincipal: number;
  /** Starts the runtime (idempotent), once the input is known to be valid. */
  start: () => void;
  dispatch: (taskId: string, reason: DispatchReason, hint?: DispatchHint) => Promise<void>;
}

/** Checks the input, stores the new task durably and starts it (or queues it). */
export async function createTask(
  context: CreationContext,
  input: CreateTaskInput,
): Promise<TaskRecord> {
  const tool = context.settings.tools.get(input.tool);
  if (tool === undefined) throw new RpcError(RPC.INVALID_PARAMS, `Unknown tool: ${input.tool}`);
  if (tool.task.mode === 'forbidden') {
    throw new RpcError(RPC.METHOD_NOT_FOUND, `Tool '${input.tool}' does not run as a task`);
  }
  assertArgumentsSize(input.arguments, context.maxArgumentsBytes);
  assertIdempotencyKey(input.idempotencyKey);
  const concurrencyKey = concurrencyKeyOf(tool, input.arguments, input.principal);
  const meta =
    concurrencyKey === undefined
      ? input.meta
      : merged(input.meta ?? {}, { [CONCURRENCY_KEY_META]: concurrencyKey });
  context.start();
  return createAndStart(context, newRecord(context, input, tool, meta));
}

function newRecord(
  context: CreationContext,
  input: CreateTaskInput,
  tool: RunnableTool,
  meta: JsonObject | undefined,
): TaskRecord {
  const { maxAttempts, clock } = context.settings;
  // Optional fields set by `if`: a conditional spread in the literal is V8's slow path.
  const fields: NewTaskInput = {
    id: newTaskId(),
    principal: input.principal,
    tool: input.tool,
    arguments: input.arguments,
    ttlMs: resolveTtl(input.ttlMs, tool.task, context.ttl),
    pollIntervalMs:
      input.pollIntervalMs ?? tool.task.pollIntervalMs ?? context.defaultPollIntervalMs,
    meta: metaWithMaxAttempts(meta ?? {}, maxAttemptsOf(tool.task, maxAttempts)),
  };
  if (input.wire !== undefined) fields.wire = input.wire;
  if (input.idempotencyKey !== undefined) fields.idempotencyKey = input.idempotencyKey;
  return newTaskRecord(fields, clock());
}

/**
 * With a free local slot the task's lease is taken in the creating write and the run starts
 * right after the reply; otherwise the executor is told, and claims it when it can.
 */
async function createAndStart(context: CreationContext, record: TaskRecord): Promise<TaskRecord> {
  const { settings, maxQueuedPerPrincipal: maxUnfinished } = context;
  const slot = context.executor?.reserve?.(record.principal);
  // A keyed task asks for its permit in the write that leases it (or in its claim).
  const permit = permitAskOf(settings.tools.get(record.tool), record);
  const lease = { owner: settings.owner, leaseMs: settings.leaseMs, permit };
  let outcome: CreateOutcome;
  const sentAt = performance.now();
  try {
    const options = slot === undefined ? { maxUnfinished } : { lease, maxUnfinished };
    outcome = await settings.store.create(record, options);
  } catch (error) {
    slot?.release();
    throw queueCap.asQueueFull(error, maxUnfinished);
  }
  const { task, created } = outcome;
  if (slot !== undefined && outcome.lease !== undefined) {
    const run = startLeasedTask(settings, task, outcome.lease, sentAt, permit);
    slot.run(task.id, () => traced('taskrail.task.execute', { 'taskrail.task_id': task.id }, run));
    return task;
  }
  slot?.release();
  if (!created) assertSameCall(task, record);
  else
    await context.dispatch(
      task.id,
      'created',
      queueCap.hintOf(task.principal, outcome.position, permit),
    );
  return task;
}
