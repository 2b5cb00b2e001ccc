import {
  CallToolResultV2Schema,
  CancelTaskResultV2Schema,
  CreateTaskResultV2Schema,
  GetTaskResultV2Schema,
  InputRequestsV2Schema,
  ToolV2Schema,
  UpdateTaskResultV2Schema,
} from '@modelcontextprotocol/ext-tasks/core/v2';
import { TaskrailClientError } from './errors.js';
import { quickCompleteReply, quickCreateTaskResult, quickTaskState } from './wire-quick.js';
import type {
  CreateTaskResult,
  DetailedTask,
  InputRequests,
  JsonObject,
  Tool,
} from './wire-types.js';

export type { CreateTaskResult, DetailedTask, InputRequests, Tool } from './wire-types.js';

/**
 * Everything a server sends is checked against the schemas of ext-tasks' `core/v2` module
 * before the client acts on it. Two tolerances, both from the spec notes: a missing
 * `resultType` counts as "complete" (servers that predate `resultType`, and the nested result
 * of a completed task in the spec's own examples).
 */

export type CallToolResult = JsonObject & {
  content: unknown[];
  structuredContent?: unknown;
  isError?: boolean;
};

export type ToolCallReply =
  | { kind: 'complete'; result: CallToolResult }
  | { kind: 'task'; task: CreateTaskResult }
  | { kind: 'input_required'; inputRequests: InputRequests; requestState?: string };

export function parseToolCallReply(result: JsonObject): ToolCallReply {
  const resultType = result.resultType ?? 'complete';
  if (resultType === 'task') {
    const task =
      quickCreateTaskResult(result) ??
      (check(CreateTaskResultV2Schema, result, 'CreateTaskResult') as CreateTaskResult);
    return { kind: 'task', task };
  }
  if (quickCompleteReply(result))
    return { kind: 'complete', result: stripResultType(result) as CallToolResult };
  if (resultType !== 'complete' && resultType !== 'input_required') {
    throw new TaskrailClientError(
      'PROTOCOL',
      `unsupported resultType '${String(resultType)}' for tools/call`,
    );
  }
  const parsed = check(CallToolResultV2Schema, { ...result, resultType }, 'CallToolResult');
  if (parsed.resultType === 'input_required') {
    return {
      kind: 'input_required',
      inputRequests: (parsed.inputRequests ?? {}) as InputRequests,
      ...(parsed.requestState === undefined ? {} : { requestState: parsed.requestState }),
    };
  }
  return { kind: 'complete', result: stripResultType(result) as CallToolResult };
}

/** A `tasks/get` reply. A completed task's nested result is itself a checked CallToolResult. */
export function parseTaskState(result: JsonObject): DetailedTask {
  return quickTaskState(result) ?? parseTaskStateBySchema(result);
}

/** A pushed task (`notifications/tasks` params): a `tasks/get` reply once `_meta` is set aside. */
export function parsePushedTask(params: JsonObject): DetailedTask {
  const { _meta: _ignored, ...task } = params;
  task.resultType = 'complete';
  return parseTaskState(task);
}

function parseTaskStateBySchema(result: JsonObject): DetailedTask {
  const nested = result.result;
  const patched =
    result.status === 'completed' &&
    nested !== null &&
    typeof nested === 'object' &&
    !Array.isArray(nested)
      ? { ...result, result: { resultType: 'complete', ...(nested as JsonObject) } }
      : result;
  const task = check(GetTaskResultV2Schema, patched, 'GetTaskResult') as DetailedTask;
  if (task.status === 'completed') {
    check(CallToolResultV2Schema, (patched as { result: unknown }).result, 'completed task result');
    return { ...task, result: stripResultType(nested as JsonObject) } as DetailedTask;
  }
  if (task.status === 'input_required')
    check(InputRequestsV2Schema, task.inputRequests, 'inputRequests');
  return task;
}

export function parseAck(result: JsonObject, method: 'tasks/update' | 'tasks/cancel'): void {
  check(
    method === 'tasks/update' ? UpdateTaskResultV2Schema : CancelTaskResultV2Schema,
    result,
    `${method} ack`,
  );
}

export function parseTools(result: JsonObject): { tools: Tool[]; nextCursor?: string } {
  const list = result.tools;
  if (!Array.isArray(list))
    throw new TaskrailClientError('PROTOCOL', 'tools/list result has no tools array');
  const tools = list.map((tool) => check(ToolV2Schema, tool, 'Tool') as Tool);
  const cursor = result.nextCursor;
  return typeof cursor === 'string' && cursor !== '' ? { tools, nextCursor: cursor } : { tools };
}

function stripResultType(result: JsonObject): JsonObject {
  const { resultType: _ignored, ...rest } = result;
  return rest;
}

interface SafeParser<T> {
  safeParse(
    value: unknown,
  ): { success: true; data: T } | { success: false; error: { message: string } };
}

function check<T>(schema: SafeParser<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new TaskrailClientError(
    'PROTOCOL',
    `the server sent an invalid ${what}: ${parsed.error.message}`,
  );
}
