import {
  encodeAck,
  encodeGetTaskResult,
  invalidParams,
  isObject,
  META,
  methodNotFound,
  missingTasksCapability,
  taskNotFound,
  type IncomingRequest,
  type Wire2026Envelope,
  type WireError,
} from '../../protocol/index.js';
import { isRpcError, rpcErrorObject } from '../../task/errors.js';
import { isPlausibleTaskId } from '../../task/ids.js';
import type { JsonObject, TaskRecord } from '../../task/record.js';
import type { TaskRuntimePort } from './runtime-port.js';
import { isServerTrouble, troubleWire } from './server-trouble.js';

/**
 * The one implementation of `tasks/*` behind every transport and both wires (2026-07-28 in
 * wire-2026/tasks.ts, 2025-11-25 in wire-2025/tasks.ts): functions from a parsed request and
 * the runtime to the task or a JSON-RPC error. Each wire encodes the answer its own way.
 */

/** Only answers that are objects can be elicitation/sampling/roots results. */
export function objectResponses(
  raw: Record<string, unknown> | undefined,
): Record<string, JsonObject> {
  const responses: Record<string, JsonObject> = {};
  for (const [key, value] of Object.entries(raw ?? {})) if (isObject(value)) responses[key] = value;
  return responses;
}

/** The runtime call behind each method; undefined: no such task for this caller. */
type Operation = (
  runtime: TaskRuntimePort,
  taskId: string,
  principal: string,
  params: JsonObject,
) => Promise<TaskRecord | undefined>;

const OPERATIONS: Readonly<Record<string, Operation>> = {
  'tasks/get': (runtime, id, principal) => runtime.getTask(id, principal),
  'tasks/update': (runtime, id, principal, params) =>
    runtime.answerInput(id, principal, objectResponses(params['inputResponses'] as JsonObject)),
  'tasks/cancel': (runtime, id, principal) => runtime.cancelTask(id, principal),
};

/** Whether `method` is one the shared task operations carry out (get, update, cancel). */
export function isTaskOperation(method: string): boolean {
  return Object.hasOwn(OPERATIONS, method);
}

/** The -32602 a malformed request earns: `taskId` a string, `inputResponses` an object. */
function paramsError(method: string, params: unknown): WireError | undefined {
  if (!isObject(params) || typeof params['taskId'] !== 'string') {
    return invalidParams('taskId must be a string');
  }
  if (method === 'tasks/update' && !isObject(params['inputResponses'])) {
    return invalidParams('inputResponses must be an object');
  }
  return undefined;
}

/**
 * Runs `tasks/get|update|cancel` for `principal` and returns the task as it is afterwards.
 * Every error a caller can earn comes back as a WireError: malformed params (400), an unknown,
 * expired or foreign task and an implausible id alike (in band), a request the runtime refuses
 * (in band), store trouble (the retryable 503). Anything else is a bug and is thrown.
 */
export async function runTaskOperation(
  runtime: TaskRuntimePort,
  method: string,
  params: unknown,
  principal: string,
): Promise<{ task: TaskRecord } | { error: WireError }> {
  const operation = OPERATIONS[method];
  if (operation === undefined) return { error: methodNotFound(method) };
  const malformed = paramsError(method, params);
  if (malformed !== undefined) return { error: malformed };
  const taskId = (params as JsonObject)['taskId'] as string;
  if (!isPlausibleTaskId(taskId)) return { error: taskNotFound() };
  let task: TaskRecord | undefined;
  try {
    task = await operation(runtime, taskId, principal, params as JsonObject);
  } catch (error) {
    return { error: operationError(error) };
  }
  return task === undefined ? { error: taskNotFound() } : { task };
}

function operationError(error: unknown): WireError {
  if (isServerTrouble(error)) return troubleWire();
  // The runtime refused the request itself (an answer that does not fit its question): an
  // in-band JSON-RPC error, like an unknown task, not a server failure.
  if (isRpcError(error)) return { httpStatus: 200, error: rpcErrorObject(error) };
  throw error;
}

/**
 * A 2026-07-28 `tasks/*` request (the removed `tasks/result|list` included) whose `_meta`
 * envelope the transport has checked, carried out: the task as the method left it, or the error.
 * Order: method, capability, params, lookup. Undefined: the request was a notification (no id),
 * which gets no answer.
 */
export function runTaskRequest(
  runtime: TaskRuntimePort,
  request: IncomingRequest,
  envelope: Wire2026Envelope,
  principal: string,
): Promise<{ task: TaskRecord } | { error: WireError } | undefined> {
  const { method } = request;
  // Not async: the operation's own promise is returned as it is, without another layer.
  if (!isTaskOperation(method)) return Promise.resolve({ error: methodNotFound(method) });
  if (!envelope.declaresTasks) return Promise.resolve({ error: missingTasksCapability() });
  if (request.id === undefined) return Promise.resolve(undefined);
  return runTaskOperation(runtime, method, request.params, principal);
}

/** The result of `method` for the task it left: GetTaskResult or the empty ack, with serverInfo. */
export function taskResult(method: string, task: TaskRecord, serverInfo: JsonObject): JsonObject {
  const result = method === 'tasks/get' ? encodeGetTaskResult(task) : encodeAck();
  result['_meta'] = { [META.serverInfo]: serverInfo };
  return result;
}
