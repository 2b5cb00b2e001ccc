import type { JsonObject, TaskRecord } from '../task/record.js';
import { pendingInputRequests } from '../task/record.js';
import { isoTime } from '../task/time.js';
import { META } from './constants.js';
import { withStructuredText } from './structured-text.js';

/** The base `Task` fields of the 2026-07-28 extension wire. */
export interface WireTask2026 {
  taskId: string;
  status: TaskRecord['status'];
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number | null;
  pollIntervalMs?: number;
}

export function encodeTask(task: TaskRecord): WireTask2026 {
  const wire: WireTask2026 = {
    taskId: task.id,
    status: task.status,
    createdAt: isoTime(task.createdAt),
    lastUpdatedAt: isoTime(task.updatedAt),
    ttlMs: task.ttlMs,
  };
  if (task.statusMessage !== undefined) wire.statusMessage = task.statusMessage;
  if (task.pollIntervalMs > 0) wire.pollIntervalMs = Math.round(task.pollIntervalMs);
  return wire;
}

/** `tools/call` → the flat CreateTaskResult. */
export function encodeCreateTaskResult(task: TaskRecord): WireTask2026 & { resultType: 'task' } {
  return { resultType: 'task', ...encodeTask(task) };
}

/**
 * A stored CallToolResult as it goes inline in a completed task: with its own
 * `resultType: "complete"` (the official client requires it) and without related-task `_meta`.
 */
export function encodeInlineResult(result: JsonObject): JsonObject {
  const inline: JsonObject = { ...result, resultType: 'complete' };
  const meta = result['_meta'];
  if (meta !== null && typeof meta === 'object' && META.relatedTask in meta) {
    const rest: JsonObject = { ...(meta as JsonObject) };
    delete rest[META.relatedTask];
    if (Object.keys(rest).length === 0) delete inline['_meta'];
    else inline['_meta'] = rest;
  }
  if (!Array.isArray(inline['content'])) inline['content'] = [];
  return withStructuredText(inline);
}

/** The DetailedTask variant that matches the task's status (also the notification params). */
export function encodeDetailedTask(task: TaskRecord): JsonObject {
  const detailed: JsonObject = { ...encodeTask(task) };
  switch (task.status) {
    case 'completed':
      detailed['result'] = encodeInlineResult(task.result ?? { content: [] });
      break;
    case 'failed':
      detailed['error'] = task.error ?? { code: -32603, message: 'Task failed' };
      break;
    case 'input_required':
      detailed['inputRequests'] = pendingInputRequests(task);
      break;
    default:
      break;
  }
  return detailed;
}

/** `tasks/get` → GetTaskResult: DetailedTask plus `resultType: "complete"`. */
export function encodeGetTaskResult(task: TaskRecord): JsonObject {
  return { resultType: 'complete', ...encodeDetailedTask(task) };
}

/** The empty ack of `tasks/update` and `tasks/cancel`. */
export function encodeAck(): JsonObject {
  return { resultType: 'complete' };
}
