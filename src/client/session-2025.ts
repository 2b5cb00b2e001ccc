import { randomUUID } from 'node:crypto';
import { RPC } from '../task/errors.js';
import { TaskrailClientError, unauthorizedError } from './errors.js';
import type { JsonRecord, RpcErrorObject, RpcReply } from './rpc-http.js';
import { readBoundedText, readSseMessages } from './sse.js';
import {
  HEADER,
  INITIALIZE_METHOD,
  INITIALIZED_NOTIFICATION,
  WIRE_2025_VERSION,
} from '../protocol/constants.js';

/**
 * A small 2025-11-25 Streamable HTTP session (initialize, `Mcp-Session-Id`, SSE replies), for
 * servers that do not speak the stateless 2026-07-28 wire. Server→client requests arriving on
 * a reply stream (task input: `elicitation/create`, `sampling/createMessage`) are answered
 * through `onRequest` and POSTed back on the session.
 */

type JsonObject = Record<string, unknown>;

export interface Session2025Options {
  url: string;
  bearer?: string;
  headers?: Record<string, string>;
  fetch?: typeof fetch;
  clientInfo: { name: string; version: string };
  capabilities: JsonObject;
  /** Bounds opening the session (`initialize`), e.g. to a deadline. */
  signal?: AbortSignal;
}

/** Answers one server→client request; throwing sends a JSON-RPC error back. */
export type ServerRequestHandler = (
  method: string,
  params: JsonObject,
  id: string,
) => Promise<JsonObject>;

export interface RequestOptions {
  onRequest?: ServerRequestHandler;
  signal?: AbortSignal;
  /** Default 30 s; `tasks/result` passes 0 (it blocks until the task ends). */
  timeoutMs?: number;
}

export class Session2025 {
  readonly serverCapabilities: JsonObject;
  readonly protocolVersion: string;
  readonly #options: Session2025Options;
  #sessionId: string | undefined;

  private constructor(options: Session2025Options, opened: Opened) {
    this.#options = options;
    this.#sessionId = opened.sessionId;
    this.protocolVersion = String(opened.init['protocolVersion']);
    const caps = opened.init['capabilities'];
    this.serverCapabilities = caps !== null && typeof caps === 'object' ? (caps as JsonObject) : {};
  }

  /** `initialize` + `notifications/initialized`; fails when the server does not answer it. */
  static async open(options: Session2025Options): Promise<Session2025> {
    return new Session2025(options, await initialize(options));
  }

  /**
   * One request. A 404 on a session means the server forgot it (restarted, or expired it): as
   * the 2025-11-25 transport asks, a new session is opened and the request sent once more.
   * Tasks outlive sessions, so `tasks/get` and `tasks/result` still find theirs.
   */
  async request(
    method: string,
    params: JsonObject,
    options: RequestOptions = {},
  ): Promise<RpcReply> {
    const id = `taskrail-${randomUUID()}`;
    const message = { jsonrpc: '2.0', id, method, params };
    let response = await this.#send(message, options);
    if (response.status === 404 && this.#sessionId !== undefined) {
      await response.body?.cancel();
      this.#sessionId = (await initialize(this.#options)).sessionId;
      response = await this.#send(message, options);
    }
    return readReply(response, id, this.#options.url, (message) =>
      this.#serve(message, options.onRequest),
    );
  }

  /**
   * Opens the session's standalone stream (an HTTP GET): server messages that answer no request,
   * such as `notifications/resources/updated`. Resolves with the response as it arrives.
   */
  openStream(signal: AbortSignal): Promise<Response> {
    const headers = new Headers(this.#options.headers);
    headers.set('accept', 'text/event-stream');
    for (const [key, value] of Object.entries(this.#headers())) headers.set(key, value);
    if (this.#options.bearer !== undefined) {
      headers.set('authorization', `Bearer ${this.#options.bearer}`);
    }
    return (this.#options.fetch ?? fetch)(this.#options.url, { method: 'GET', headers, signal });
  }

  async close(): Promise<void> {
    if (this.#sessionId === undefined) return;
    const doFetch = this.#options.fetch ?? fetch;
    const signal = AbortSignal.timeout(5000);
    await doFetch(this.#options.url, { method: 'DELETE', headers: this.#headers(), signal })
      .then((response) => response.body?.cancel())
      .catch(() => undefined);
  }

  #send(message: JsonObject, options: RequestOptions): Promise<Response> {
    return post(this.#options, this.#headers(), message, options);
  }

  #headers(): Record<string, string> {
    return {
      [HEADER.protocolVersion]: this.protocolVersion,
      ...(this.#sessionId === undefined ? {} : { [HEADER.sessionId]: this.#sessionId }),
    };
  }

  /** A request from the server on a reply stream: answer it on the side, keep reading. */
  #serve(message: JsonObject, onRequest: ServerRequestHandler | undefined): void {
    const id = message['id'] as string | number;
    const method = String(message['method']);
    const params = (message['params'] ?? {}) as JsonObject;
    const answer = async (): Promise<JsonObject> => {
      if (onRequest === undefined) throw new Error(`no handler for ${method}`);
      return { jsonrpc: '2.0', id, result: await onRequest(method, params, String(id)) };
    };
    void answer()
      .catch((error: unknown) => ({
        jsonrpc: '2.0',
        id,
        error: {
          code: RPC.INTERNAL_ERROR,
          message: error instanceof Error ? error.message : String(error),
        },
      }))
      .then((reply) => this.#send(reply, {}))
      .then((response) => response.body?.cancel())
      .catch(() => undefined);
  }
}

interface Opened {
  init: JsonObject;
  sessionId: string | undefined;
}

async function initialize(options: Session2025Options): Promise<Opened> {
  const id = `taskrail-${randomUUID()}`;
  const params = {
    protocolVersion: WIRE_2025_VERSION,
    capabilities: options.capabilities,
    clientInfo: options.clientInfo,
  };
  const response = await post(
    options,
    undefined,
    { jsonrpc: '2.0', id, method: INITIALIZE_METHOD, params },
    opening(options),
  );
  const reply = await readReply(response, id, options.url, () => undefined);
  if (reply.kind === 'error' || typeof reply.result['protocolVersion'] !== 'string') {
    throw new TaskrailClientError('PROTOCOL', `${options.url} refused initialize`);
  }
  const sessionId = response.headers.get(HEADER.sessionId) ?? undefined;
  const headers = {
    [HEADER.protocolVersion]: reply.result['protocolVersion'],
    ...(sessionId === undefined ? {} : { [HEADER.sessionId]: sessionId }),
  };
  const sent = await post(
    options,
    headers,
    { jsonrpc: '2.0', method: INITIALIZED_NOTIFICATION },
    opening(options),
  );
  await sent.body?.cancel();
  return { init: reply.result, sessionId };
}

function opening(options: Session2025Options): RequestOptions {
  return options.signal === undefined ? {} : { signal: options.signal };
}

async function post(
  options: Session2025Options,
  session: Record<string, string> | undefined,
  message: JsonObject,
  request: RequestOptions,
): Promise<Response> {
  const headers = new Headers(options.headers);
  headers.set('content-type', 'application/json');
  headers.set('accept', 'application/json, text/event-stream');
  for (const [key, value] of Object.entries(session ?? {})) headers.set(key, value);
  if (options.bearer !== undefined) headers.set('authorization', `Bearer ${options.bearer}`);
  const timeoutMs = request.timeoutMs ?? 30_000;
  const signals = [request.signal, timeoutMs > 0 ? AbortSignal.timeout(timeoutMs) : undefined];
  const live = signals.filter((s): s is AbortSignal => s !== undefined);
  try {
    return await (options.fetch ?? fetch)(options.url, {
      method: 'POST',
      headers,
      body: JSON.stringify(message),
      ...(live.length === 0 ? {} : { signal: AbortSignal.any(live) }),
    });
  } catch (error) {
    if (request.signal?.aborted) throw request.signal.reason;
    throw new TaskrailClientError('CONNECTION', `cannot reach ${options.url}: ${String(error)}`, {
      cause: error,
    });
  }
}

function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

async function readReply(
  response: Response,
  id: string,
  url: string,
  onServerRequest: (message: JsonObject) => void,
): Promise<RpcReply> {
  if (response.status === 401 || response.status === 403) {
    await response.body?.cancel();
    throw unauthorizedError(url, response.status, response.headers.get('www-authenticate'));
  }
  let reply: JsonObject | undefined;
  const take = (message: unknown): boolean => {
    if (!isObject(message)) return false;
    if (typeof message['method'] === 'string' && message['id'] !== undefined)
      onServerRequest(message);
    if (message['id'] !== id || message['method'] !== undefined) return false;
    reply = message;
    return true;
  };
  const type = response.headers.get('content-type') ?? '';
  try {
    if (type.includes('text/event-stream') && response.body !== null)
      await readSseMessages(response.body, take);
    else take(parseJson(await readBoundedText(response.body)));
  } catch (error) {
    if (error instanceof TaskrailClientError) throw error;
    // The connection broke mid-reply (the server went away): the request's fate is unknown.
    throw new TaskrailClientError('CONNECTION', `${url} broke off its reply: ${String(error)}`, {
      cause: error,
    });
  }
  if (reply === undefined) {
    throw new TaskrailClientError(
      'CONNECTION',
      `${url} answered HTTP ${response.status} without a JSON-RPC response`,
    );
  }
  const found: JsonObject = reply;
  if (isObject(found['error']))
    return { kind: 'error', error: found['error'] as unknown as RpcErrorObject };
  if (!isObject(found['result']))
    throw new TaskrailClientError('PROTOCOL', `${url} sent a result that is not an object`);
  return { kind: 'result', result: found['result'] as JsonRecord };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
