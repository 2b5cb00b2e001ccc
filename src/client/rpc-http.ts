import { randomUUID } from 'node:crypto';
import { RPC, type JsonRpcErrorObject } from '../task/errors.js';
import { TaskrailClientError, unauthorizedError } from './errors.js';
import { fetchPost, nodePost, type HttpAnswer } from './http-post.js';
import { readSseMessages } from './sse.js';
import {
  HEADER,
  META,
  SERVER_ERROR,
  TASKS_EXTENSION,
  WIRE_2026_VERSION,
} from '../protocol/constants.js';
import { routingNameOf } from '../protocol/envelope.js';

export const PROTOCOL_VERSION = WIRE_2026_VERSION;
export const TASKS_EXTENSION_ID = TASKS_EXTENSION;

type JsonObject = Record<string, unknown>;

/** Any value `JSON.parse` can return; the same type as ext-tasks' `JsonValue`. */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | JsonRecord;

/** A parsed JSON object. */
export interface JsonRecord {
  readonly [key: string]: JsonValue;
}

/** A JSON-RPC error as it arrived: its `data`, like everything parsed, is JSON. */
export interface RpcErrorObject extends JsonRpcErrorObject {
  data?: JsonValue;
}

/**
 * A JSON-RPC reply, assignable to `@modelcontextprotocol/ext-tasks`' `JsonRpcResponse`: the result
 * is a parsed JSON object, so its values are `JsonValue`, not `unknown`.
 */
export type RpcReply =
  | { readonly kind: 'result'; readonly result: JsonRecord }
  | {
      readonly kind: 'error';
      readonly error: RpcErrorObject;
      /** The server's own trouble (HTTP 503, or `data.retryable`): the same request may succeed later. */
      readonly retryable?: boolean;
    };

export interface DispatchOptions {
  readonly signal?: AbortSignal;
  readonly context?: {
    readonly headers?: Readonly<Record<string, string>>;
    readonly requestTimeoutMs?: number;
  };
}

/**
 * The `rawDispatch` an ext-tasks session (its `core/v2` module) needs, and what taskrail's own
 * client uses: one 2026-07-28 request over Streamable HTTP. Same signature as ext-tasks'
 * `RawClientDispatch`.
 */
export type RawDispatch = (request: unknown, options?: DispatchOptions) => Promise<RpcReply>;

/** The per-request `_meta` envelope of the 2026-07-28 wire (no handshake, so every request). */
export interface RequestFraming {
  protocolVersion: string;
  clientInfo: { name: string; version: string };
  clientCapabilities: JsonObject;
}

export interface HttpDispatchOptions {
  url: string | URL;
  /** Sent as `Authorization: Bearer …`. */
  bearer?: string;
  /** Extra headers on every request (merged case-insensitively; per-request headers win). */
  headers?: Record<string, string>;
  /** When given, requests without `params._meta` envelope keys get them filled in. */
  framing?: RequestFraming;
  fetch?: typeof fetch;
  /** Per-request timeout; default 30 s. */
  timeoutMs?: number;
}

export function createHttpDispatch(options: HttpDispatchOptions): RawDispatch {
  const post = options.fetch === undefined ? nodePost : fetchPost(options.fetch);
  const url = new URL(options.url);
  return async (request, dispatchOptions = {}) => {
    const body = frameRequest(request, options.framing);
    const headers = requestHeaders(body, options, dispatchOptions.context?.headers);
    const timeoutMs = dispatchOptions.context?.requestTimeoutMs ?? options.timeoutMs ?? 30_000;
    let answer: HttpAnswer;
    try {
      answer = await post(url, headers, JSON.stringify(body), dispatchOptions.signal, timeoutMs);
    } catch (error) {
      if (dispatchOptions.signal?.aborted) throw dispatchOptions.signal.reason;
      throw new TaskrailClientError('CONNECTION', `cannot reach ${url.href}: ${describe(error)}`, {
        cause: error,
      });
    }
    return readReply(answer, body.id, url);
  };
}

interface FramedRequest {
  jsonrpc: '2.0';
  id: string | number;
  method: string;
  params: JsonObject;
}

function frameRequest(request: unknown, framing: RequestFraming | undefined): FramedRequest {
  if (request === null || typeof request !== 'object') {
    throw new TaskrailClientError('USAGE', 'a request must be an object with a method');
  }
  const { id, method, params } = request as { id?: unknown; method?: unknown; params?: unknown };
  if (typeof method !== 'string')
    throw new TaskrailClientError('USAGE', 'a request needs a method');
  const p: JsonObject =
    params !== null && typeof params === 'object' ? { ...(params as JsonObject) } : {};
  if (framing !== undefined) p._meta = withEnvelope(p._meta, framing);
  const requestId =
    typeof id === 'string' || typeof id === 'number' ? id : `taskrail-${randomUUID()}`;
  return { jsonrpc: '2.0', id: requestId, method, params: p };
}

/** Adds the three reserved envelope keys unless the caller already set them. */
export function withEnvelope(meta: unknown, framing: RequestFraming): JsonObject {
  const base: JsonObject =
    meta !== null && typeof meta === 'object' ? { ...(meta as JsonObject) } : {};
  base[META.protocolVersion] ??= framing.protocolVersion;
  base[META.clientInfo] ??= framing.clientInfo;
  base[META.clientCapabilities] ??= framing.clientCapabilities;
  return base;
}

function requestHeaders(
  body: FramedRequest,
  options: HttpDispatchOptions,
  perRequest: Readonly<Record<string, string>> | undefined,
): Record<string, string> {
  // Names are lower-cased so that they merge case-insensitively: ext-tasks sends `Mcp-Name`,
  // we set `mcp-name`, and the server must see one value, not "id, id".
  const headers: Record<string, string> = {};
  const set = (name: string, value: string): void => void (headers[name.toLowerCase()] = value);
  for (const [name, value] of Object.entries(options.headers ?? {})) set(name, value);
  set('content-type', 'application/json');
  set('accept', 'application/json, text/event-stream');
  const version = (body.params._meta as JsonObject | undefined)?.[META.protocolVersion];
  set(HEADER.protocolVersion, typeof version === 'string' ? version : PROTOCOL_VERSION);
  set(HEADER.method, body.method);
  const name = routingNameOf(body.method, body.params);
  if (name !== undefined) set(HEADER.name, encodeHeaderValue(name));
  if (options.bearer !== undefined) set('authorization', `Bearer ${options.bearer}`);
  for (const [key, value] of Object.entries(perRequest ?? {})) set(key, value);
  return headers;
}

const SENTINEL = /^=\?base64\?.*\?=$/;

/** Header values that are not plain printable ASCII travel as `=?base64?…?=` (SEP-2243). */
export function encodeHeaderValue(value: string): string {
  const plain = /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(value) && !SENTINEL.test(value);
  return plain ? value : `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

async function readReply(response: HttpAnswer, id: string | number, url: URL): Promise<RpcReply> {
  if (response.status === 401 || response.status === 403) {
    await response.discard();
    throw unauthorizedError(url.href, response.status, response.wwwAuthenticate);
  }
  const stream = response.contentType.includes('text/event-stream') ? response.stream() : null;
  let message: unknown;
  if (stream !== null) {
    await readSseMessages(stream, (candidate) => {
      if (!isResponseFor(candidate, id)) return false;
      message = candidate;
      return true;
    });
  } else {
    const text = await response.text();
    try {
      message = text === '' ? undefined : (JSON.parse(text) as unknown);
    } catch {
      message = undefined;
    }
  }
  if (!isResponseFor(message, id)) {
    throw new TaskrailClientError(
      'CONNECTION',
      `${url.href} answered HTTP ${response.status} without a JSON-RPC response`,
    );
  }
  const reply = message as { result?: JsonValue; error?: RpcErrorObject };
  if (reply.error !== undefined) {
    const error = normaliseError(reply.error);
    return isRetryable(response.status, error)
      ? { kind: 'error', error, retryable: true }
      : { kind: 'error', error };
  }
  const result = reply.result;
  if (result === null || typeof result !== 'object' || Array.isArray(result)) {
    throw new TaskrailClientError('PROTOCOL', `${url.href} sent a result that is not an object`);
  }
  return { kind: 'result', result: result as JsonRecord };
}

function isRetryable(status: number, error: RpcErrorObject): boolean {
  if (error.code !== RPC.INTERNAL_ERROR) return false;
  const data = error.data as { retryable?: unknown } | undefined;
  return status === 503 || data?.retryable === true;
}

function isResponseFor(message: unknown, id: string | number): boolean {
  if (message === null || typeof message !== 'object') return false;
  const m = message as { id?: unknown; result?: unknown; error?: unknown };
  return m.id === id && (m.result !== undefined || m.error !== undefined);
}

/** Early builds used -32003 for "missing required client capability"; treat it as -32021. */
function normaliseError(error: RpcErrorObject): RpcErrorObject {
  const code = typeof error.code === 'number' ? error.code : RPC.INTERNAL_ERROR;
  const message = typeof error.message === 'string' ? error.message : 'unknown error';
  const current =
    code === SERVER_ERROR.LEGACY_MISSING_CAPABILITY ? RPC.MISSING_REQUIRED_CLIENT_CAPABILITY : code;
  return { ...error, code: current, message };
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
  }
  return String(error);
}
