import type { ServerResponse } from 'node:http';
import {
  errorMessage,
  type HeaderReader,
  type IncomingRequest,
  type WireError,
} from '../../protocol/index.js';
import type { TaskEvents } from '../../store/events.js';
import type { JsonObject } from '../../task/record.js';
import type { TaskRuntimeFace } from '../runtime-port.js';
import { ListenHub } from './hub.js';
import type { ListenOptions } from './options.js';
import { asksForTasks, checkListen, tooManySubscriptions, type ListenRequest } from './request.js';
import { nodeSink, webSink } from './sse-sink.js';

export { DEFAULT_LISTEN_OPTIONS, type ListenOptions } from './options.js';
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
  runtime: () => TaskRuntimeFace;
  serverInfo: JsonObject;
}

// One hub per runtime, so the front needs no new constructor argument.
const hubs = new WeakMap<TaskRuntimeFace, ListenHub>();

function eventsOf(runtime: TaskRuntimeFace): TaskEvents | undefined {
  return (runtime as TaskRuntimeFace & { events?: TaskEvents }).events;
}

function hubFor(runtime: TaskRuntimeFace): ListenHub | undefined {
  let hub = hubs.get(runtime);
  const events = eventsOf(runtime);
  if (hub === undefined && events !== undefined)
    hubs.set(runtime, (hub = new ListenHub(runtime, events)));
  return hub;
}

/** Changes the listen limits of a server (`app.runtime`); open streams keep theirs. */
export function configureListen(runtime: TaskRuntimeFace, options: Partial<ListenOptions>): void {
  const hub = hubFor(runtime);
  if (hub !== undefined) hub.options = { ...hub.options, ...options };
}

/** Open task streams and routed task ids of a server, for tests and metrics. */
export function listenStats(runtime: TaskRuntimeFace): {
  subscriptions: number;
  routedTasks: number;
} {
  return hubFor(runtime)?.stats ?? { subscriptions: 0, routedTasks: 0 };
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
 * A modern `subscriptions/listen` naming `notifications.taskIds`, served here because the SDK's
 * listen router drops task ids. Undefined: not ours, hand the request to the SDK.
 */
export function routeListen(
  front: ListenFront,
  req: IncomingRequest,
  headers: HeaderReader,
  principal: string,
): ListenDecision | undefined {
  if (!asksForTasks(req)) return undefined;
  const runtime = front.runtime();
  const hub = hubFor(runtime);
  if (hub === undefined) return undefined;
  const checked = checkListen(req, headers, hub.options);
  if ('httpStatus' in checked) return errorDecision(req.id, checked);
  if (!hub.reserve(principal)) {
    return errorDecision(req.id, tooManySubscriptions(hub.options.maxSubscriptionsPerPrincipal));
  }
  return { kind: 'stream', stream: streamOf(hub, checked, principal, front) };
}
