import type { ServerResponse } from 'node:http';
import {
  errorMessage,
  type HeaderReader,
  type IncomingRequest,
  type WireError,
} from '../../protocol/index.js';
import type { TaskEvents } from '../../store/events.js';
import type { JsonObject } from '../../task/record.js';
import type { TaskRuntimeFace } from '../tasks/runtime-port.js';
import { ListenHub } from './hub.js';
import type { ListenOptions } from './options.js';
import {
  asksForTasks,
  checkListen,
  checkListenBody,
  tooManySubscriptions,
  type ListenRequest,
} from './request.js';
import { messageSink, nodeSink, webSink } from './sse-sink.js';

export { DEFAULT_LISTEN_OPTIONS, type ListenOptions } from './options.js';
export { asksForTasks } from './request.js';
export type { ListenHub } from './hub.js';
export { INITIAL_STATE_META, SUBSCRIPTION_ID_META } from './subscription.js';

/** A listen request accepted for streaming; `http.ts` serves it on its own face. */
export interface ListenStream {
  serveNode(res: ServerResponse): void;
  response(): Response;
}

export type ListenDecision =
  | { kind: 'reply'; reply: { status: number; body: string } }
  | { kind: 'stream'; stream: ListenStream };

interface ListenFront {
  listen?: ListenHub | undefined;
  serverInfo: JsonObject;
}

/** What the hub needs of the runtime: owner-checked reads and the store's change events. */
export type ListenRuntime = Pick<TaskRuntimeFace, 'getTask'> & { readonly events: TaskEvents };

// The hub of each runtime, so tests and metrics can reach it through `app.runtime`.
const hubs = new WeakMap<ListenRuntime, ListenHub>();

/** The task-stream hub of one server; `createTaskServer` makes one and hands it to the front. */
export function createListenHub(
  runtime: ListenRuntime,
  options: Partial<ListenOptions> = {},
): ListenHub {
  const hub = new ListenHub(runtime, runtime.events, options);
  hubs.set(runtime, hub);
  return hub;
}

/** The task-stream hub `createTaskServer` made for this runtime (stdio serves listen with it). */
export function listenHubOf(runtime: ListenRuntime): ListenHub | undefined {
  return hubs.get(runtime);
}

/** Changes the listen limits of a server (`app.runtime`); open streams keep theirs. */
export function configureListen(runtime: ListenRuntime, options: Partial<ListenOptions>): void {
  const hub = hubs.get(runtime);
  if (hub !== undefined) hub.options = { ...hub.options, ...options };
}

/** Open task streams and routed task ids of a server, for tests and metrics. */
export function listenStats(runtime: ListenRuntime): {
  subscriptions: number;
  routedTasks: number;
} {
  return hubs.get(runtime)?.stats ?? { subscriptions: 0, routedTasks: 0 };
}

function errorDecision(id: IncomingRequest['id'], wire: WireError): ListenDecision {
  return {
    kind: 'reply',
    reply: { status: wire.httpStatus, body: errorMessage(id ?? null, wire.error) },
  };
}

function streamOf(
  hub: ListenHub,
  request: ListenRequest,
  principal: string,
  front: ListenFront,
): ListenStream {
  const maxBuffered = hub.options.maxBufferedBytes;
  return {
    serveNode(res) {
      hub.open(request, principal, nodeSink(res, maxBuffered), front.serverInfo);
    },
    response() {
      const { sink, response } = webSink(maxBuffered);
      hub.open(request, principal, sink, front.serverInfo);
      return response;
    },
  };
}

/**
 * A 2026-07-28 `subscriptions/listen` naming `notifications.taskIds`, served here because the SDK's
 * listen router drops task ids. Undefined: not ours, hand the request to the SDK.
 */
export function routeListen(
  front: ListenFront,
  req: IncomingRequest,
  headers: HeaderReader,
  principal: string,
): ListenDecision | undefined {
  const hub = front.listen;
  if (hub === undefined || !asksForTasks(req)) return undefined;
  const checked = checkListen(req, headers, hub.options);
  if ('httpStatus' in checked) return errorDecision(req.id, checked);
  if (!hub.reserve(principal)) {
    return errorDecision(req.id, tooManySubscriptions(hub.options.maxSubscriptionsPerPrincipal));
  }
  return { kind: 'stream', stream: streamOf(hub, checked, principal, front) };
}

/**
 * A listen stream on a message transport (stdio): the same checks as on HTTP except the routing
 * headers, which stdio does not have; the stream's messages go to `send`. Returns the error to
 * answer with, or the function that ends the stream from outside (the client's
 * `notifications/cancelled`, the connection closing).
 */
export function openMessageListen(
  hub: ListenHub,
  req: IncomingRequest,
  principal: string,
  serverInfo: JsonObject,
  send: (message: object) => void,
): { error: WireError } | { stop: () => void; done: (listener: () => void) => void } {
  const checked = checkListenBody(req, () => undefined, hub.options);
  if ('httpStatus' in checked) return { error: checked };
  if (!hub.reserve(principal)) {
    return { error: tooManySubscriptions(hub.options.maxSubscriptionsPerPrincipal) };
  }
  const sink = messageSink(send);
  hub.open(checked, principal, sink, serverInfo);
  return { stop: () => sink.close(), done: (listener) => sink.onClose(listener) };
}
