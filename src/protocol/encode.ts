import { RPC } from '../task/errors.js';
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
  return withTaskFields({}, task) as WireTask2026;
}

/**
 * Adds the `Task` fields to `target` in place, after what it holds: the encoders build their
 * answers in one object this way, in the wire's key order, where an object spread would copy
 * every field again through V8's slow path (its shape is not known in advance).
 */
function withTaskFields<T extends object>(target: T, task: TaskRecord): T & WireTask2026 {
  const wire = target as T & WireTask2026;
  const createdAt = isoTime(task.createdAt);
  wire.taskId = task.id;
  wire.status = task.status;
  wire.createdAt = createdAt;
  wire.lastUpdatedAt = task.updatedAt === task.createdAt ? createdAt : isoTime(task.updatedAt);
  wire.ttlMs = task.ttlMs;
  if (task.statusMessage !== undefined) wire.statusMessage = task.statusMessage;
  if (task.pollIntervalMs > 0) wire.pollIntervalMs = Math.round(task.pollIntervalMs);
  return wire;
}

/**
 * `tools/call` → the flat CreateTaskResult; `before` holds the keys that come first (the
 * front's `content: []`), and is the object returned.
 */
export function encodeCreateTaskResult<T extends JsonObject>(
  task: TaskRecord,
  before?: T,
): T & WireTask2026 & { resultType: 'task' } {
  const result = (before ?? {}) as T & { resultType: 'task' };
  result.resultType = 'task';
  return withTaskFields(result, task);
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
  return withDetails({}, task);
}

function withDetails(target: JsonObject, task: TaskRecord): JsonObject {
  const detailed = withTaskFields(target, task) as unknown as JsonObject;
  switch (task.status) {
    case 'completed':
      detailed['result'] = encodeInlineResult(task.result ?? { content: [] });
      break;
    case 'failed':
      detailed['error'] = task.error ?? { code: RPC.INTERNAL_ERROR, message: 'Task failed' };
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
  return withDetails({ resultType: 'complete' }, task);
}

/** The empty ack of `tasks/update` and `tasks/cancel`. */
export function encodeAck(): JsonObject {
  return { resultType: 'complete' };
}
