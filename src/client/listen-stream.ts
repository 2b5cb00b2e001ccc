import { randomUUID } from 'node:crypto';
import type { DetailedTask } from './wire-types.js';
import { withEnvelope, type RequestFraming } from './rpc-http.js';
import { readBoundedText, readSseMessages } from './sse.js';
import { parseTaskState } from './wire.js';

type JsonObject = Record<string, unknown>;

const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';
/** taskrail servers send every acknowledged task's current state right after the ack. */
const INITIAL_STATE = 'dev.taskrail/initialState';

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

/** A refusal is one small JSON-RPC error; a larger body is not read to the end. */
const MAX_REFUSAL_BYTES = 64 * 1024;

const UNSUPPORTED_CODES = new Set([-32601, -32021, -32022, -32020, -32003]);
const UNSUPPORTED_STATUSES = new Set([401, 403, 404, 405, 406, 415, 501]);

function requestBody(id: string, taskIds: string[], framing: RequestFraming): string {
  const params = { notifications: { taskIds }, _meta: withEnvelope(undefined, framing) };
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'subscriptions/listen', params });
}

function requestHeaders(conn: ListenConnection): Headers {
  const headers = new Headers(conn.headers);
  headers.set('content-type', 'application/json');
  headers.set('accept', 'application/json, text/event-stream');
  headers.set('mcp-protocol-version', conn.framing.protocolVersion);
  headers.set('mcp-method', 'subscriptions/listen');
  if (conn.bearer !== undefined) headers.set('authorization', `Bearer ${conn.bearer}`);
  return headers;
}

async function refusal(response: Response): Promise<StreamEnd> {
  let code: unknown;
  try {
    const text = await readBoundedText(response.body, MAX_REFUSAL_BYTES);
    code = (JSON.parse(text) as { error?: { code?: unknown } }).error?.code;
  } catch {
    code = undefined;
  }
  const unsupported =
    UNSUPPORTED_STATUSES.has(response.status) ||
    (typeof code === 'number' && UNSUPPORTED_CODES.has(code)) ||
    response.ok; // a 2xx that is not a stream: a server that does not stream listen requests
  return { kind: 'refused', unsupported };
}

function paramsOf(message: JsonObject): { params: JsonObject; meta: JsonObject } | undefined {
  const params = message['params'];
  if (params === null || typeof params !== 'object') return undefined;
  const meta = (params as JsonObject)['_meta'];
  return { params: params as JsonObject, meta: (meta ?? {}) as JsonObject };
}

function readTask(params: JsonObject): DetailedTask | undefined {
  const { _meta: _ignored, ...task } = params;
  try {
    return parseTaskState({ ...task, resultType: 'complete' });
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
  if (parts === undefined || parts.meta[SUBSCRIPTION_ID] !== id) return undefined;
  if (m['method'] === 'notifications/subscriptions/acknowledged') {
    const taskIds = (parts.params['notifications'] as JsonObject | undefined)?.['taskIds'];
    acked.value = true;
    const ids = Array.isArray(taskIds) ? taskIds.filter((t) => typeof t === 'string') : undefined;
    handlers.acknowledged(ids, parts.meta[INITIAL_STATE] === true);
  } else if (m['method'] === 'notifications/tasks') {
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
  try {
    const response = await (conn.fetch ?? fetch)(conn.url, {
      method: 'POST',
      headers: requestHeaders(conn),
      body: requestBody(id, taskIds, conn.framing),
      signal,
    });
    const type = response.headers.get('content-type') ?? '';
    if (!response.ok || !type.includes('text/event-stream') || response.body === null) {
      return await refusal(response);
    }
    let end: StreamEnd | undefined;
    await readSseMessages(response.body, (message) => {
      end = route(message, id, handlers, acked);
      return end !== undefined;
    });
    return end ?? { kind: 'broken', acknowledged: acked.value };
  } catch {
    if (signal.aborted) return { kind: 'closed' };
    return { kind: 'broken', acknowledged: acked.value };
  }
}
