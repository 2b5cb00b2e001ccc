import { isObject, TASKRAIL_META } from '../../protocol/index.js';
import type { CreateTaskInput } from '../../runtime/api.js';
import { assertIdempotencyKey } from '../../runtime/idempotency.js';
import { normalizeTaskOption } from '../../runtime/tool.js';
import type { JsonObject, TaskRecord } from '../../task/record.js';
import { CONNECTION_META } from './caller-scope.js';
import { ANONYMOUS } from './principal.js';
import type { TaskRuntimePort } from './runtime-port.js';
import type { RegisteredTaskTool } from './types.js';
import { WIRE_2026_VERSION } from '../../protocol/constants.js';

/** Who asks for the task: its owner, and the capabilities its client declared. */
export interface TaskCaller {
  principal: string;
  clientCapabilities: JsonObject;
  /** An anonymous caller's connection scope (caller-scope.ts), where the transport knows it. */
  connection?: string | undefined;
}

/** What differs between the ways a task is made (its wire, and what that wire adds). */
export interface TaskCreation {
  wire: NonNullable<CreateTaskInput['wire']>;
  /** The caller's own TTL (2025-11-25 `task.ttl`) over the tool's. */
  ttlMs?: number;
  idempotencyKey?: string;
  /** More task metadata beside the client capabilities (the 2025-11-25 session). */
  meta?: JsonObject;
}

/**
 * The one place a tool call becomes the input of `createTask`, for every wire (2026-07-28
 * tasks, the task behind a host without tasks, 2025-11-25 tasks): the tool's TTL and poll
 * interval, the caller, the client capabilities the task's questions are judged by.
 */
export function taskCreationInput(
  tool: RegisteredTaskTool,
  args: JsonObject,
  caller: TaskCaller,
  creation: TaskCreation,
): CreateTaskInput {
  const settings = normalizeTaskOption(tool.config.task);
  const ttlMs = creation.ttlMs ?? settings.ttlMs;
  const idempotencyKey = creation.idempotencyKey;
  return {
    ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
    tool: tool.name,
    arguments: args,
    principal: caller.principal,
    ...(ttlMs === undefined ? {} : { ttlMs }),
    ...(settings.pollIntervalMs === undefined ? {} : { pollIntervalMs: settings.pollIntervalMs }),
    wire: creation.wire,
    meta: {
      clientCapabilities: caller.clientCapabilities,
      ...connectionMeta(caller),
      ...creation.meta,
    },
  };
}

/** An anonymous caller's connection, kept with its task (its fair shares count against it). */
function connectionMeta(caller: TaskCaller): JsonObject {
  if (caller.principal !== ANONYMOUS || caller.connection === undefined) return {};
  return { [CONNECTION_META]: caller.connection };
}

/** Creates the task of one 2026-07-28 `tools/call` (on the SDK path and the fast path alike). */
export async function startToolTask(
  runtime: TaskRuntimePort,
  tool: RegisteredTaskTool,
  args: JsonObject,
  caller: TaskCaller & { meta: unknown },
): Promise<TaskRecord> {
  const idempotencyKey = isObject(caller.meta)
    ? caller.meta[TASKRAIL_META.idempotencyKey]
    : undefined;
  assertIdempotencyKey(idempotencyKey);
  const creation: TaskCreation = {
    wire: WIRE_2026_VERSION,
    ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
  };
  return runtime.createTask(taskCreationInput(tool, args, caller, creation));
}
