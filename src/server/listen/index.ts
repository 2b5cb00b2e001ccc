import type { ServerResponse } from 'node:http';
import type { IncomingRequest, Wire2026Envelope, WireError } from '../../protocol/index.js';
import type { TaskEvents } from '../../store/events.js';
import type { TaskStore } from '../../store/port.js';
import type { JsonObject } from '../../task/record.js';
import type { TaskRuntimePort } from '../tasks/runtime-port.js';
import { ListenHub } from './hub.js';
import type { ListenOptions } from './options.js';
import {
  checkListenRequest,
  streamsInUse,
  tooManySubscriptions,
  type ListenRequest,
} from './request.js';
import { messageSink, nodeSink, webSink } from './sse-sink.js';

export { DEFAULT_LISTEN_OPTIONS, type ListenOptions } from './options.js';
export { asksForTasks, type ListenRequest } from './request.js';
export type { ListenHub } from './hub.js';
export { INITIAL_STATE_META, SUBSCRIPTION_ID_META } from './subscription.js';

/**
 * What the hub needs of the runtime: owner-checked reads and the store's change events (and,
 * when it has one, the store, whose text lengths resource updates carry).
 */
export type ListenRuntime = Pick<TaskRuntimePort, 'getTask'> & {
  readonly events: TaskEvents;
  readonly store?: Pick<TaskStore, 'readText'>;
};

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

/**
 * A 2026-07-28 `subscriptions/listen` naming `notifications.taskIds` (the SDK's listen router
 * drops task ids), its envelope checked by the route: the request to stream, its slot reserved
 * for `principal`, or the error to answer. The transport opens it on its own sink (below).
 */
export function acceptListen(
  hub: ListenHub,
  req: IncomingRequest,
  envelope: WireError | Wire2026Envelope,
  principal: string,
  scope?: string,
): WireError | ListenRequest {
  const checked = checkListenRequest(req, envelope, hub.options);
  if ('httpStatus' in checked) return checked;
  const hold = hub.reserve(principal, scope);
  if (hold === 'quota') return tooManySubscriptions(hub.options.maxSubscriptionsPerPrincipal);
  if (!('give' in hold)) return streamsInUse(hold);
  return { ...checked, hold };
}

/** An accepted task stream as SSE on a Node response. */
export function openNodeListen(
  hub: ListenHub,
  request: ListenRequest,
  principal: string,
  serverInfo: JsonObject,
  res: ServerResponse,
): void {
  hub.open(request, principal, nodeSink(res, hub.options.maxBufferedBytes), serverInfo);
}

/** An accepted task stream as the SSE body of a web Response. */
export function openWebListen(
  hub: ListenHub,
  request: ListenRequest,
  principal: string,
  serverInfo: JsonObject,
): Response {
  const { sink, response } = webSink(hub.options.maxBufferedBytes);
  hub.open(request, principal, sink, serverInfo);
  return response;
}

/**
 * An accepted task stream on a message transport (stdio): its messages go to `send`; there is
 * no keep-alive. Returns the function that ends it from outside (the client's
 * `notifications/cancelled`, the connection closing) and a way to learn that it ended.
 */
export function openMessageListen(
  hub: ListenHub,
  request: ListenRequest,
  principal: string,
  serverInfo: JsonObject,
  send: (message: object) => void,
): { stop: () => void; done: (listener: () => void) => void } {
  const sink = messageSink(send);
  hub.open(request, principal, sink, serverInfo);
  return { stop: () => sink.close(), done: (listener) => sink.onClose(listener) };
}
