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
  /** The resource URIs it names (`notifications.resourceSubscriptions`): a resource stream. */
  resourceUris?: string[];
  /** Its place in the server's fair stream bound, given back when the stream ends (hub.ts). */
  hold?: FairTicket;
}

/**
 * The listen requests taskrail serves itself: those naming `notifications.taskIds` or
 * `notifications.resourceSubscriptions` (task resources follow the store's events, which the
 * SDK's listen router cannot see). Other core filters (toolsListChanged, …) stay with the SDK.
 */
export function asksForTasks(req: IncomingRequest): boolean {
  if (req.method !== LISTEN_METHOD || !isObject(req.params)) return false;
  const notifications = req.params['notifications'];
  return (
    isObject(notifications) &&
    (notifications['taskIds'] !== undefined || notifications['resourceSubscriptions'] !== undefined)
  );
}

function stringList(value: unknown): string[] | undefined {
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) return undefined;
  return [...new Set(value as string[])];
}

/** `notifications.resourceSubscriptions` checked: one stream, at most `max` URIs. */
function checkResourceRequest(
  id: RequestId,
  notifications: Record<string, unknown>,
  max: number,
): WireError | ListenRequest {
  if (notifications['taskIds'] !== undefined) {
    return invalidParams(
      'ask for notifications.taskIds and notifications.resourceSubscriptions on separate subscriptions/listen streams',
    );
  }
  const uris = stringList(notifications['resourceSubscriptions']);
  if (uris === undefined) {
    return invalidParams('notifications.resourceSubscriptions must be an array of resource URIs');
  }
  if (uris.length > max) {
    const wire = invalidParams(`notifications.resourceSubscriptions names more than ${max} URIs`);
    wire.error.data = { maxResourceSubscriptions: max };
    return wire;
  }
  return { id, taskIds: [], resourceUris: uris };
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
  if (req.id === undefined) return invalidRequest('subscriptions/listen needs an id');
  const notifications = (req.params as { notifications: Record<string, unknown> }).notifications;
  if (notifications['resourceSubscriptions'] !== undefined) {
    return checkResourceRequest(req.id, notifications, options.maxTaskIdsPerSubscription);
  }
  if (!envelope.declaresTasks) return missingTasksCapability();
  const unique = stringList(notifications['taskIds']);
  if (unique === undefined)
    return invalidParams('notifications.taskIds must be an array of strings');
  if (unique.length > options.maxTaskIdsPerSubscription) {
    return tooManyTaskIds(options.maxTaskIdsPerSubscription);
  }
  return { id: req.id, taskIds: unique };
}
