import { randomUUID } from 'node:crypto';
import type { DetailedTask } from './wire-types.js';
import { nodePost, type HttpAnswer } from './http-post.js';
import { withEnvelope, type RequestFraming } from './rpc-http.js';
import { readBoundedText, readSseMessages, type ByteStream } from './sse.js';
import { parsePushedTask } from './wire.js';
import {
  HEADER,
  LISTEN_METHOD,
  META,
  SERVER_ERROR,
  SUBSCRIPTION_ACK_NOTIFICATION,
  TASKRAIL_META,
  TASKS_NOTIFICATION,
} from '../protocol/constants.js';
import { RPC } from '../task/errors.js';

const RESOURCE_UPDATED_NOTIFICATION = 'notifications/resources/updated';

type JsonObject = Record<string, unknown>;

/** Where and as whom a listen stream is opened (the same as the client's requests). */
export interface ListenConnection {
  url: string;
  bearer?: string;
  headers?: Record<string, string>;
  framing: RequestFraming;
  fetch?: typeof fetch;
}

export interface StreamHandlers {
  /** `taskIds` undefined: the server answered the listen without task ids (no task push). */
  acknowledged(taskIds: string[] | undefined, initialState: boolean): void;
  task(task: DetailedTask): void;
  /** A notification that failed validation; re-read that task with `tasks/get`. */
  invalid(taskId: string | undefined): void;
}

/**
 * How a stream ended. `refused`: an error answer before any ack (`unsupported` when the server
 * plainly does not offer task push). `broken`: the connection failed or the stream ended
 * without the listen result. `complete`: the server ended it gracefully. `closed`: we did.
 */
export type StreamEnd =
  | { kind: 'closed' }
  | { kind: 'refused'; unsupported: boolean }
  | { kind: 'complete' }
  | { kind: 'broken'; acknowledged: boolean };

/** How long the server may take to answer the listen request (its headers, not the stream). */
const OPEN_MS = 30_000;
/** After the listen result, how long the server may take to end the response. */
const DRAIN_MS = 1_000;
/** A refusal is one small JSON-RPC error; a larger body is not read to the end. */
const MAX_REFUSAL_BYTES = 64 * 1024;

const UNSUPPORTED_CODES = new Set<number>([
  RPC.METHOD_NOT_FOUND,
  RPC.MISSING_REQUIRED_CLIENT_CAPABILITY,
  RPC.UNSUPPORTED_PROTOCOL_VERSION,
  RPC.HEADER_MISMATCH,
  SERVER_ERROR.LEGACY_MISSING_CAPABILITY,
]);
const UNSUPPORTED_STATUSES = new Set([401, 403, 404, 405, 406, 415, 501]);

function requestBody(id: string, filter: JsonObject, framing: RequestFraming): string {
  const params = { notifications: filter, _meta: withEnvelope(undefined, framing) };
  return JSON.stringify({ jsonrpc: '2.0', id, method: LISTEN_METHOD, params });
}

function requestHeaders(conn: ListenConnection): Record<string, string> {
  // Lower-cased, so a caller's `Content-Type` and ours are one header, ours winning.
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(conn.headers ?? {})) {
    headers[name.toLowerCase()] = value;
  }
  headers['content-type'] = 'application/json';
  headers['accept'] = 'application/json, text/event-stream';
  headers[HEADER.protocolVersion] = conn.framing.protocolVersion;
  headers[HEADER.method] = LISTEN_METHOD;
  if (conn.bearer !== undefined) headers['authorization'] = `Bearer ${conn.bearer}`;
  return headers;
}

/** One URL object per connection, so that node:http's request options are derived once. */
const urls = new WeakMap<ListenConnection, URL>();

function urlOf(conn: ListenConnection): URL {
  let url = urls.get(conn);
  if (url === undefined) urls.set(conn, (url = new URL(conn.url)));
  return url;
}

type Opened = Pick<HttpAnswer, 'status' | 'contentType' | 'text' | 'stream'>;

/**
 * POSTs the listen request: on node:http unless the caller brought its own fetch. A stream is
 * opened for every batch of followed tasks, as often as tasks are created, and fetch's web
 * objects cost about half a millisecond more per request (see http-post.ts).
 */
async function openStream(
  conn: ListenConnection,
  body: string,
  signal: AbortSignal,
): Promise<Opened> {
  const headers = requestHeaders(conn);
  if (conn.fetch === undefined) return nodePost(urlOf(conn), headers, body, signal, OPEN_MS);
  const response = await conn.fetch(conn.url, { method: 'POST', headers, body, signal });
  const opened: Opened = {
    status: response.status,
    contentType: response.headers.get('content-type') ?? '',
    text: () => readBoundedText(response.body),
    stream: () => response.body,
  };
  return opened;
}

async function refusal(response: Opened): Promise<StreamEnd> {
  let code: unknown;
  try {
    const text = await readBoundedText(response.stream(), MAX_REFUSAL_BYTES);
    code = (JSON.parse(text) as { error?: { code?: unknown } }).error?.code;
  } catch {
    code = undefined;
  }
  const ok = response.status >= 200 && response.status < 300;
  const unsupported =
    UNSUPPORTED_STATUSES.has(response.status) ||
    (typeof code === 'number' && UNSUPPORTED_CODES.has(code)) ||
    ok; // a 2xx that is not a stream: a server that does not stream listen requests
  return { kind: 'refused', unsupported };
}

function paramsOf(message: JsonObject): { params: JsonObject; meta: JsonObject } | undefined {
  const params = message['params'];
  if (params === null || typeof params !== 'object') return undefined;
  const meta = (params as JsonObject)['_meta'];
  return { params: params as JsonObject, meta: (meta ?? {}) as JsonObject };
}

function readTask(params: JsonObject): DetailedTask | undefined {
  try {
    return parsePushedTask(params);
  } catch {
    return undefined;
  }
}

/** Routes one stream message; returns the end when the listen request got its answer. */
function route(
  message: unknown,
  id: string,
  handlers: StreamHandlers,
  acked: { value: boolean },
): StreamEnd | undefined {
  if (message === null || typeof message !== 'object') return undefined;
  const m = message as JsonObject;
  if (m['id'] === id) {
    if (m['result'] !== undefined) return { kind: 'complete' };
    return acked.value
      ? { kind: 'broken', acknowledged: true }
      : { kind: 'refused', unsupported: false };
  }
  const parts = paramsOf(m);
  if (parts === undefined || parts.meta[META.subscriptionId] !== id) return undefined;
  if (m['method'] === SUBSCRIPTION_ACK_NOTIFICATION) {
    const taskIds = (parts.params['notifications'] as JsonObject | undefined)?.['taskIds'];
    acked.value = true;
    const ids = Array.isArray(taskIds) ? taskIds.filter((t) => typeof t === 'string') : undefined;
    handlers.acknowledged(ids, parts.meta[TASKRAIL_META.initialState] === true);
  } else if (m['method'] === TASKS_NOTIFICATION) {
    const task = readTask(parts.params);
    const taskId = parts.params['taskId'];
    if (task === undefined) handlers.invalid(typeof taskId === 'string' ? taskId : undefined);
    else handlers.task(task);
  }
  return undefined;
}

/** Opens one `subscriptions/listen` for `taskIds` and reads it until it ends. Never throws. */
export async function runListenStream(
  conn: ListenConnection,
  taskIds: string[],
  handlers: StreamHandlers,
  signal: AbortSignal,
): Promise<StreamEnd> {
  const id = `listen-${randomUUID()}`;
  const acked = { value: false };
  const read: { end?: StreamEnd } = {};
  try {
    const body = requestBody(id, { taskIds }, conn.framing);
    const response = await openStream(conn, body, signal);
    const ok = response.status >= 200 && response.status < 300;
    const stream = response.contentType.includes('text/event-stream') ? response.stream() : null;
    if (!ok || stream === null) return await refusal(response);
    await readToEnd(stream, (message) => route(message, id, handlers, acked), read);
    return read.end ?? { kind: 'broken', acknowledged: acked.value };
  } catch {
    if (read.end !== undefined) return read.end;
    if (signal.aborted) return { kind: 'closed' };
    return { kind: 'broken', acknowledged: acked.value };
  }
}

/**
 * Reads messages until one ends the listen request. After the listen result a node:http body
 * is read on to its end, which the server sends with the result: a response read to its end
 * leaves its connection to the keep-alive pool, where one left early is destroyed, and every
 * call would then open a new connection for its stream. A server that does not end the
 * response within `DRAIN_MS` of the result has it cut.
 */
async function readToEnd(
  stream: ByteStream,
  routeOne: (message: unknown) => StreamEnd | undefined,
  read: { end?: StreamEnd },
): Promise<void> {
  const destroy = (stream as { destroy?: unknown }).destroy;
  let cut: NodeJS.Timeout | undefined;
  try {
    await readSseMessages(stream, (message) => {
      if (read.end !== undefined) return false;
      read.end = routeOne(message);
      if (read.end?.kind !== 'complete' || typeof destroy !== 'function')
        return read.end !== undefined;
      cut = setTimeout(() => void (destroy as () => void).call(stream), DRAIN_MS);
      return false;
    });
  } finally {
    clearTimeout(cut);
  }
}

/**
 * Opens one `subscriptions/listen` for `resourceSubscriptions` and calls `updated` with the URI
 * and `_meta` of every `notifications/resources/updated` on it, until the stream ends. Never
 * throws.
 */
export async function runResourceListen(
  conn: ListenConnection,
  uris: string[],
  handlers: {
    acknowledged(uris: string[]): void;
    updated(uri: string, meta: Record<string, unknown>): void;
  },
  signal: AbortSignal,
): Promise<StreamEnd> {
  const id = `listen-${randomUUID()}`;
  const read: { end?: StreamEnd } = {};
  let acked = false;
  const routeOne = (message: unknown): StreamEnd | undefined => {
    const m = (message ?? {}) as JsonObject;
    if (m['id'] === id) {
      return m['result'] !== undefined
        ? { kind: 'complete' }
        : { kind: 'broken', acknowledged: acked };
    }
    const parts = paramsOf(m);
    if (parts === undefined || parts.meta[META.subscriptionId] !== id) return undefined;
    if (m['method'] === SUBSCRIPTION_ACK_NOTIFICATION) {
      acked = true;
      const granted = (parts.params['notifications'] as JsonObject | undefined)?.[
        'resourceSubscriptions'
      ];
      handlers.acknowledged(
        Array.isArray(granted) ? granted.filter((u): u is string => typeof u === 'string') : [],
      );
    } else if (m['method'] === RESOURCE_UPDATED_NOTIFICATION) {
      const uri = parts.params['uri'];
      if (typeof uri === 'string') handlers.updated(uri, parts.meta);
    }
    return undefined;
  };
  try {
    const body = requestBody(id, { resourceSubscriptions: uris }, conn.framing);
    const response = await openStream(conn, body, signal);
    const ok = response.status >= 200 && response.status < 300;
    const stream = response.contentType.includes('text/event-stream') ? response.stream() : null;
    if (!ok || stream === null) return await refusal(response);
    await readToEnd(stream, routeOne, read);
    return read.end ?? { kind: 'broken', acknowledged: acked };
  } catch {
    if (read.end !== undefined) return read.end;
    if (signal.aborted) return { kind: 'closed' };
    return { kind: 'broken', acknowledged: acked };
  }
}
