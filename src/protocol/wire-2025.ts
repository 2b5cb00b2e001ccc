import { RPC, type JsonRpcErrorObject } from '../task/errors.js';
import type { JsonObject, TaskRecord } from '../task/record.js';
import type { TaskStatus } from '../task/status.js';
import { isoTime } from '../task/time.js';
import { META } from './constants.js';
import { withStructuredText } from './structured-text.js';

/**
 * The 2025-11-25 wire (the core's experimental tasks): nested CreateTaskResult, `ttl`/`pollInterval`,
 * `tasks/result` carrying the payload, and `isError: true` meaning `failed`. Records are shared
 * with the 2026-07-28 wire, so every status is mapped here when a record is rendered for 2025-11-25.
 */

/** What a server that runs tool calls as 2025-11-25 tasks declares in `initialize`. */
export const WIRE_2025_SERVER_TASK_CAPABILITIES = {
  list: {},
  cancel: {},
  requests: { tools: { call: {} } },
} as const;

export interface WireTask2025 {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttl: number | null;
  pollInterval?: number;
}

function isToolError(result: JsonObject | undefined): boolean {
  return result?.['isError'] === true;
}

/** 2025-11-25 counts a tool result with `isError: true` as `failed`; 2026-07-28 keeps it `completed`. */
export function status2025(task: TaskRecord): TaskStatus {
  return task.status === 'completed' && isToolError(task.result) ? 'failed' : task.status;
}

export function encodeTask2025(task: TaskRecord): WireTask2025 {
  const wire: WireTask2025 = {
    taskId: task.id,
    status: status2025(task),
    createdAt: isoTime(task.createdAt),
    lastUpdatedAt: isoTime(task.updatedAt),
    ttl: task.ttlMs,
  };
  if (task.statusMessage !== undefined) wire.statusMessage = task.statusMessage;
  else if (wire.status === 'failed' && task.status === 'completed') {
    wire.statusMessage = 'Tool execution failed (isError)';
  }
  if (task.pollIntervalMs > 0) wire.pollInterval = Math.round(task.pollIntervalMs);
  return wire;
}

/** `tools/call` + `params.task` → `{ task }`, with the optional immediate-response hint. */
export function encodeCreateTaskResult2025(
  task: TaskRecord,
  immediateResponse?: string,
): JsonObject {
  const result: JsonObject = { task: encodeTask2025(task) };
  if (immediateResponse !== undefined) {
    result['_meta'] = { [META.modelImmediateResponse]: immediateResponse };
  }
  return result;
}

export function relatedTaskMeta(taskId: string): JsonObject {
  return { [META.relatedTask]: { taskId } };
}

/** What `tasks/result` answers for a terminal task: the tool's result, or its JSON-RPC error. */
export type TaskPayload2025 =
  { ok: true; result: JsonObject } | { ok: false; error: JsonRpcErrorObject };

export function encodeTaskPayload2025(task: TaskRecord): TaskPayload2025 {
  if (task.status === 'completed') {
    const result = { ...(task.result ?? {}) };
    if (!Array.isArray(result['content'])) result['content'] = [];
    const meta = result['_meta'];
    const base = meta !== null && typeof meta === 'object' ? (meta as JsonObject) : {};
    result['_meta'] = { ...base, ...relatedTaskMeta(task.id) };
    return { ok: true, result: withStructuredText(result) };
  }
  if (task.status === 'failed') {
    return { ok: false, error: task.error ?? { code: RPC.INTERNAL_ERROR, message: 'Task failed' } };
  }
  return {
    ok: false,
    error: {
      code: RPC.INTERNAL_ERROR,
      message: `Task was cancelled: ${task.statusMessage ?? 'by request'}`,
    },
  };
}

/** The `-32602` of `tasks/cancel` on a task that already ended (2025-11-25 rule; 2026-07-28 acknowledges instead). */
export function alreadyTerminalMessage(task: TaskRecord): string {
  return `Cannot cancel task: already in terminal status '${status2025(task)}'`;
}

/** Whether `initialize` client capabilities declare 2025-11-25 tasks at all. */
export function declares2025Tasks(capabilities: unknown): boolean {
  if (capabilities === null || typeof capabilities !== 'object') return false;
  const tasks = (capabilities as JsonObject)['tasks'];
  return tasks !== null && typeof tasks === 'object';
}

/** Whether `initialize` server capabilities accept task-augmented `tools/call`. */
export function accepts2025ToolTasks(capabilities: unknown): boolean {
  if (capabilities === null || typeof capabilities !== 'object') return false;
  const tasks = (capabilities as JsonObject)['tasks'] as JsonObject | undefined;
  const tools = (tasks?.['requests'] as JsonObject | undefined)?.['tools'] as
    JsonObject | undefined;
  return tools?.['call'] !== undefined && tools['call'] !== null;
}
