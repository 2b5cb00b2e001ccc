import {
  checkEnvelope,
  checkRoutingHeaders,
  errorMessage,
  isWireError,
  resultMessageOfJson,
  type HeaderReader,
  type IncomingRequest,
  type Wire2026Envelope,
  type RequestId,
  type WireError,
} from '../../protocol/index.js';
import type { JsonObject } from '../../task/record.js';
import type { TaskRuntimeFace } from '../tasks/runtime-port.js';
import { runTaskRequest, taskResult } from '../tasks/operations.js';
import { getAnswersOf } from './tasks-get-cache.js';

/** A finished HTTP answer: status and JSON body (empty for 202). */
export interface Reply {
  status: number;
  body: string;
}

export function errorReply(id: RequestId | null, wire: WireError): Reply {
  return { status: wire.httpStatus, body: errorMessage(id, wire.error) };
}

/** Routing headers first, then the `_meta` envelope: the checks every 2026-07-28 request passes. */
export function checkWire2026(
  req: IncomingRequest,
  headers: HeaderReader,
): WireError | Wire2026Envelope {
  return checkRoutingHeaders(req.method, req.params, headers) ?? checkEnvelope(req.params, headers);
}

/**
 * `tasks/*` on the 2026-07-28 wire over HTTP, answered without an SDK server instance: the routing
 * headers and the envelope are checked here, the rest by the shared implementation
 * (core/task-methods.ts); this function only frames its answer as status and body (a polled task
 * that has not changed reuses its serialized answer: get-answers.ts).
 */
export async function serveTaskMethod(
  runtime: TaskRuntimeFace,
  req: IncomingRequest,
  headers: HeaderReader,
  principal: string,
  serverInfo: JsonObject,
): Promise<Reply> {
  const id = req.id ?? null;
  const checked = checkWire2026(req, headers);
  if (isWireError(checked)) return errorReply(id, checked);
  const outcome = await runTaskRequest(runtime, req, checked, principal);
  if (outcome === undefined) return { status: 202, body: '' };
  if ('error' in outcome) return errorReply(id, outcome.error);
  const json =
    req.method === 'tasks/get'
      ? getAnswersOf(serverInfo).json(outcome.task)
      : JSON.stringify(taskResult(req.method, outcome.task, serverInfo));
  return { status: 200, body: resultMessageOfJson(id as RequestId, json) };
}
