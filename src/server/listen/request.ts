import {
  invalidParams,
  invalidRequest,
  isObject,
  isWireError,
  missingTasksCapability,
  type IncomingRequest,
  type RequestId,
  type Wire2026Envelope,
  type WireError,
} from '../../protocol/index.js';
import type { ListenOptions } from './options.js';
import type { FairRefusalAnswer, FairTicket } from '../tasks/fair-bound.js';
import { LISTEN_METHOD, SERVER_ERROR } from '../../protocol/constants.js';

/** A checked task listen request: its id (the subscription id) and the task ids it names. */
export interface ListenRequest {
  id: RequestId;
  taskIds: string[];
  /** Its place in the server's fair stream bound, given back when the stream ends (hub.ts). */
  hold?: FairTicket;
}

/**
 * The listen requests taskrail serves itself: those naming `notifications.taskIds`. Core-only
 * filters (toolsListChanged, …) stay with the SDK's own listen router.
 */
export function asksForTasks(req: IncomingRequest): boolean {
  if (req.method !== LISTEN_METHOD || !isObject(req.params)) return false;
  const notifications = req.params['notifications'];
  return isObject(notifications) && notifications['taskIds'] !== undefined;
}

export function tooManyTaskIds(max: number): WireError {
  const wire = invalidParams(`notifications.taskIds names more than ${max} tasks`);
  wire.error.data = { maxTaskIds: max };
  return wire;
}

/** A quota, not a malformed request: HTTP 429 so that proxies and clients know to back off. */
export function tooManySubscriptions(max: number): WireError {
  return {
    httpStatus: 429,
    error: {
      code: SERVER_ERROR.LIMIT_REACHED,
      message: `Too many open subscriptions: at most ${max} task streams per caller`,
      data: { maxSubscriptions: max },
    },
  };
}

/** The server's streams are shared fairly: this caller is at its share, or all are in use. */
export function streamsInUse(refused: FairRefusalAnswer): WireError {
  return {
    httpStatus: refused.httpStatus,
    error: {
      code: SERVER_ERROR.LIMIT_REACHED,
      message: refused.message,
      data: { ...refused.data, retryAfterMs: refused.retryAfterSeconds * 1000 },
    },
  };
}

/**
 * A task listen request whose routing headers and `_meta` envelope the route checked
 * (wire-2026/route.ts): what every transport checks past those.
 */
export function checkListenRequest(
  req: IncomingRequest,
  envelope: WireError | Wire2026Envelope,
  options: ListenOptions,
): WireError | ListenRequest {
  if (isWireError(envelope)) return envelope;
  if (!envelope.declaresTasks) return missingTasksCapability();
  if (req.id === undefined) return invalidRequest('subscriptions/listen needs an id');
  const notifications = (req.params as { notifications: Record<string, unknown> }).notifications;
  const taskIds = notifications['taskIds'];
  if (!Array.isArray(taskIds) || !taskIds.every((id) => typeof id === 'string')) {
    return invalidParams('notifications.taskIds must be an array of strings');
  }
  const unique = [...new Set(taskIds as string[])];
  if (unique.length > options.maxTaskIdsPerSubscription) {
    return tooManyTaskIds(options.maxTaskIdsPerSubscription);
  }
  return { id: req.id, taskIds: unique };
}
