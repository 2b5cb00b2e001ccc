import {
  checkEnvelope,
  checkRoutingHeaders,
  encodeAck,
  encodeGetTaskResult,
  errorMessage,
  invalidParams,
  isObject,
  isRemovedTaskMethod,
  isWireError,
  META,
  methodNotFound,
  missingTasksCapability,
  resultMessage,
  taskNotFound,
  type HeaderReader,
  type IncomingRequest,
  type ModernEnvelope,
  type RequestId,
  type WireError,
} from '../protocol/index.js';
import { isRpcError, rpcErrorObject } from '../task/errors.js';
import { isPlausibleTaskId } from '../task/ids.js';
import type { JsonObject } from '../task/record.js';
import type { TaskRuntimeFace } from './core/runtime-port.js';
import { isServerTrouble, troubleWire } from './core/server-trouble.js';
import { objectResponses } from './core/tool-call.js';

/** A finished HTTP answer: status and JSON body (empty for 202). */
export interface Reply {
  status: number;
  body: string;
}

export function errorReply(id: RequestId | null, wire: WireError): Reply {
  return { status: wire.httpStatus, body: errorMessage(id, wire.error) };
}

export type TroubleOutcome<T> = { ok: true; value: T } | { ok: false; reply: Reply };

/** Runs `work`; store trouble (already logged by the guarded face) becomes the 503 answer. */
export async function troubleAsReply<T>(
  id: RequestId | null,
  work: () => Promise<T>,
): Promise<TroubleOutcome<T>> {
  try {
    return { ok: true, value: await work() };
  } catch (error) {
    if (!isServerTrouble(error)) throw error;
    return { ok: false, reply: errorReply(id, troubleWire()) };
  }
}

/** Routing headers first, then the `_meta` envelope: the checks every modern request passes. */
export function checkModern(
  req: IncomingRequest,
  headers: HeaderReader,
): WireError | ModernEnvelope {
  return checkRoutingHeaders(req.method, req.params, headers) ?? checkEnvelope(req.params, headers);
}

type Handler = (
  runtime: TaskRuntimeFace,
  taskId: string,
  principal: string,
  params: JsonObject,
) => Promise<JsonObject | undefined>;

const HANDLERS: Record<string, Handler> = {
  'tasks/get': async (runtime, id, principal) => {
    const task = await runtime.getTask(id, principal);
    return task && encodeGetTaskResult(task);
  },
  'tasks/update': async (runtime, id, principal, params) => {
    const task = await runtime.answerInput(
      id,
      principal,
      objectResponses(params['inputResponses'] as JsonObject),
    );
    return task && encodeAck();
  },
  'tasks/cancel': async (runtime, id, principal) => {
    const task = await runtime.cancelTask(id, principal);
    return task && encodeAck();
  },
};

/**
 * `tasks/get|update|cancel` (and the removed `tasks/result|list`) on the modern wire, answered
 * without an SDK server instance. Order: headers, envelope, method, capability, params, lookup.
 */
export async function serveTaskMethod(
  runtime: TaskRuntimeFace,
  req: IncomingRequest,
  headers: HeaderReader,
  principal: string,
  serverInfo: JsonObject,
): Promise<Reply> {
  const id = req.id ?? null;
  const checked = checkModern(req, headers);
  if (isWireError(checked)) return errorReply(id, checked);
  const handler = HANDLERS[req.method];
  if (handler === undefined || isRemovedTaskMethod(req.method))
    return errorReply(id, methodNotFound(req.method));
  if (!checked.declaresTasks) return errorReply(id, missingTasksCapability());
  if (req.id === undefined) return { status: 202, body: '' };
  const params = req.params as JsonObject;
  const taskId = params['taskId'];
  if (typeof taskId !== 'string') return errorReply(id, invalidParams('taskId must be a string'));
  if (req.method === 'tasks/update' && !isObject(params['inputResponses'])) {
    return errorReply(id, invalidParams('inputResponses must be an object'));
  }
  if (!isPlausibleTaskId(taskId)) return errorReply(id, taskNotFound());
  let outcome: TroubleOutcome<JsonObject | undefined>;
  try {
    outcome = await troubleAsReply(id, () => handler(runtime, taskId, principal, params));
  } catch (error) {
    // The runtime refused the request itself (an answer that does not fit its question): an
    // in-band JSON-RPC error, like an unknown task, not a server failure.
    if (!isRpcError(error)) throw error;
    return { status: 200, body: errorMessage(id, rpcErrorObject(error)) };
  }
  if (!outcome.ok) return outcome.reply;
  const result = outcome.value;
  if (result === undefined) return errorReply(id, taskNotFound());
  result['_meta'] = { [META.serverInfo]: serverInfo };
  return { status: 200, body: resultMessage(req.id, result) };
}
