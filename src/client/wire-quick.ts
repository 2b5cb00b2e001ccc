import { isJsonValue } from '@modelcontextprotocol/ext-tasks/core';
import type { CreateTaskResult, DetailedTask, JsonObject } from './wire-types.js';

/**
 * Hand-written checks for the shapes a task client reads on every call — a CreateTaskResult, a
 * `working`, `completed` or `cancelled` task, a plain CallToolResult — that cost a fraction of
 * the zod schemas of ext-tasks' `core/v2`. Each answers only when it is sure the schema would
 * accept the value, and then returns exactly what the schema-based parse returns; on anything
 * else (a rarer status, a content block that is not text, a value of the wrong type) it answers
 * undefined and the caller runs the schema, so what is refused and the error message are the
 * schema's own. test/client/wire-quick.test.ts holds both paths against each other.
 */

/** `z.int()` of zod v4: a finite integer within the safe range. */
const isInt = (value: unknown): value is number => Number.isSafeInteger(value);

function isPlainObject(value: unknown): value is JsonObject {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

const isJsonObject = (value: unknown): value is JsonObject =>
  isPlainObject(value) && isJsonValue(value);

/**
 * The fields every task shape shares (`TaskBaseShape`), copied in the order the schema declares
 * them; undefined when one is missing or of the wrong type. An optional field that is present
 * must hold a value (a key set to undefined goes to the schema).
 */
function taskBase(value: JsonObject): JsonObject | undefined {
  const { taskId, createdAt, lastUpdatedAt, ttlMs } = value;
  if (typeof taskId !== 'string' || typeof createdAt !== 'string') return undefined;
  if (typeof lastUpdatedAt !== 'string' || (ttlMs !== null && !isInt(ttlMs))) return undefined;
  const base: JsonObject = { taskId };
  if ('statusMessage' in value) {
    if (typeof value.statusMessage !== 'string') return undefined;
    base.statusMessage = value.statusMessage;
  }
  base.createdAt = createdAt;
  base.lastUpdatedAt = lastUpdatedAt;
  base.ttlMs = ttlMs;
  if ('pollIntervalMs' in value) {
    if (!isInt(value.pollIntervalMs)) return undefined;
    base.pollIntervalMs = value.pollIntervalMs;
  }
  return base;
}

/** Adds an optional `_meta` (a JSON object); false when it is there but not one. */
function addMeta(target: JsonObject, source: JsonObject): boolean {
  if (!('_meta' in source)) return true;
  if (!isJsonObject(source._meta)) return false;
  target._meta = source._meta;
  return true;
}

const TASK_STATUSES = new Set(['working', 'input_required', 'completed', 'failed', 'cancelled']);

/** `CreateTaskResultV2Schema` (a plain object schema: undeclared keys are dropped). */
export function quickCreateTaskResult(value: JsonObject): CreateTaskResult | undefined {
  const base = taskBase(value);
  const status = value.status;
  if (base === undefined || typeof status !== 'string' || !TASK_STATUSES.has(status))
    return undefined;
  if (value.resultType !== 'task') return undefined;
  const task: JsonObject = { ...base, status, resultType: 'task' };
  return addMeta(task, value) ? (task as unknown as CreateTaskResult) : undefined;
}

/**
 * `parseTaskState` for a `working`, `cancelled` or `completed` task whose result is a plain
 * CallToolResult (`GetTaskResultV2Schema`, then `CallToolResultV2Schema` on the nested result).
 * The nested result is checked once, and handed back as the schema path hands it back: a copy
 * without its `resultType`.
 */
export function quickTaskState(value: JsonObject): DetailedTask | undefined {
  const status = value.status;
  if (status !== 'working' && status !== 'cancelled' && status !== 'completed') return undefined;
  const base = taskBase(value);
  if (base === undefined || value.resultType !== 'complete') return undefined;
  const task: JsonObject = { ...base, status };
  if (status === 'completed') {
    const nested = value.result;
    if (!isJsonObject(nested) || !isCompleteResult(nested)) return undefined;
    const { resultType: _complete, ...result } = nested;
    task.result = result;
  }
  task.resultType = 'complete';
  return addMeta(task, value) ? (task as unknown as DetailedTask) : undefined;
}

/**
 * True when `CallToolResultV2Schema` surely accepts `{ resultType: 'complete', ...value }`
 * (`value` may say `resultType: 'complete'` itself): `value` already passed the JSON-value
 * check, so undeclared keys and `structuredContent` hold JSON; what is left is `content`,
 * `isError` and `_meta`.
 */
export function isCompleteResult(value: JsonObject): boolean {
  if ('resultType' in value && value.resultType !== 'complete') return false;
  const content = value.content;
  if (!Array.isArray(content) || !content.every(isTextBlock)) return false;
  if ('isError' in value && typeof value.isError !== 'boolean') return false;
  return !('_meta' in value) || isPlainObject(value._meta);
}

/** A text content block without annotations (their checks are the schema's). */
function isTextBlock(block: unknown): boolean {
  if (!isPlainObject(block) || block.type !== 'text' || typeof block.text !== 'string')
    return false;
  return !('annotations' in block) && (!('_meta' in block) || isPlainObject(block._meta));
}

/** `CallToolResultV2Schema` on a direct `tools/call` answer (no `resultType`, or `complete`). */
export function quickCompleteReply(value: JsonObject): boolean {
  return isJsonValue(value) && isCompleteResult(value);
}
