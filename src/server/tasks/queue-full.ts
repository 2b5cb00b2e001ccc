import { ProtocolError } from '@modelcontextprotocol/server';
import type { WireError } from '../../protocol/index.js';
import { isQueueFull, type QueueFullError } from '../../runtime/queue-cap.js';
import { rpcErrorObject } from '../../task/errors.js';
import { peekFirstEvent } from './first-event.js';
import { troubleStatus } from './server-trouble.js';

export { isQueueFull };

/** HTTP status of a create refused by `--max-queued-per-principal`. */
export const QUEUE_FULL_STATUS = 429;

/** The refusal on the 2026-07-28 fast path: HTTP 429 and the JSON-RPC error. */
export function queueFullWire(error: QueueFullError): WireError {
  return { httpStatus: QUEUE_FULL_STATUS, error: rpcErrorObject(error) };
}

/** The same refusal for the SDK, which sends a ProtocolError's code, message and data. */
export function queueFullProtocolError(error: QueueFullError): ProtocolError {
  return new ProtocolError(error.code, error.message, error.data);
}

/** Seconds to wait that a JSON answer's queue-full error names; undefined for any other answer. */
function queueFullRetryAfter(text: string): number | undefined {
  if (!text.includes('"maxQueuedPerPrincipal"')) return undefined;
  try {
    const message = JSON.parse(text) as { error?: { code?: unknown; data?: unknown } };
    const data = message.error?.data as { retryAfterSeconds?: unknown } | undefined;
    const seconds = data?.retryAfterSeconds;
    return typeof seconds === 'number' && Number.isFinite(seconds) ? seconds : undefined;
  } catch {
    return undefined;
  }
}

const RESULT_AFTER_ID = '{"jsonrpc":"2.0","id":';

/**
 * A JSON-RPC success as the fronts and the SDK write it: `result` first, or right after
 * `jsonrpc` and a plain id. Neither refusal can be in it, so its (maybe large) text need not be
 * searched. `,"` cannot occur inside a JSON string (its quotes are escaped), so the first
 * `,"result":` with no `{` or `[` before it is the top level's.
 */
function isResultMessage(text: string): boolean {
  if (text.startsWith('{"result":')) return true;
  if (!text.startsWith(RESULT_AFTER_ID)) return false;
  const at = text.indexOf(',"result":', RESULT_AFTER_ID.length);
  if (at === -1) return false;
  for (let i = RESULT_AFTER_ID.length; i < at; i += 1) {
    const c = text.charCodeAt(i);
    if (c === 123 || c === 91) return false;
  }
  return true;
}

/**
 * The HTTP status and extra headers of a JSON answer: a queue-full refusal goes out as 429 with
 * `Retry-After`, store trouble as 503, anything else as it came.
 */
export function refusalOf(
  status: number,
  text: string,
): { status: number; headers?: Record<string, string> } {
  if (status === 200 && isResultMessage(text)) return { status };
  const retryAfter =
    status === 200 || status === QUEUE_FULL_STATUS ? queueFullRetryAfter(text) : undefined;
  if (retryAfter === undefined) return { status: troubleStatus(status, text) };
  return { status: QUEUE_FULL_STATUS, headers: { 'retry-after': String(Math.ceil(retryAfter)) } };
}

/** How long a streamed (SSE) answer to a `tools/call` may hold its status for its first event. */
const FIRST_EVENT_WAIT_MS = 1000;

function contentType(response: Response): string {
  return response.headers.get('content-type') ?? '';
}

/** A single `tools/call` request: its stream's first event is, when refused, the whole answer. */
function isToolsCall(parsedBody: unknown): boolean {
  return (
    typeof parsedBody === 'object' &&
    parsedBody !== null &&
    (parsedBody as { method?: unknown }).method === 'tools/call'
  );
}

type FetchLike<O> = (request: Request, options: O) => Promise<Response>;

/**
 * A `tools/call` answered on an SSE stream (a 2025-11-25 session) holds its 200 until the first
 * event (at most FIRST_EVENT_WAIT_MS): when that event is the call's queue-full refusal, it goes
 * out as JSON with 429 and `Retry-After` instead, as on the 2026-07-28 wire. A refusal after a
 * tool's questions before its task stays inside the 200 stream, as does store trouble (an SDK
 * client reads it there as the call's error).
 */
async function streamRefusal(response: Response, stream: ReadableStream<Uint8Array>) {
  const peeked = await peekFirstEvent(stream, FIRST_EVENT_WAIT_MS);
  const retryAfter = peeked.data === undefined ? undefined : queueFullRetryAfter(peeked.data);
  if (peeked.data !== undefined && retryAfter !== undefined) {
    await peeked.body.cancel();
    const headers = new Headers(response.headers);
    headers.set('content-type', 'application/json');
    headers.set('retry-after', String(Math.ceil(retryAfter)));
    return new Response(peeked.data, { status: QUEUE_FULL_STATUS, headers });
  }
  const { status, statusText, headers } = response;
  return new Response(peeked.body, { status, statusText, headers });
}

/**
 * Wraps an SDK fetch handler so that an answer carrying the store-trouble -32603 goes out with
 * HTTP 503, and a queue-full refusal with 429 and `Retry-After`, instead of 200 (a plain proxy
 * or host then also sees it): a JSON answer, or a `tools/call` stream refused at once.
 */
export function withRefusalStatus<O extends { parsedBody?: unknown } | undefined>(
  fetch: FetchLike<O>,
): FetchLike<O> {
  return async (request, options) => {
    const response = await fetch(request, options);
    if (response.status !== 200) return response;
    const type = contentType(response);
    if (type.includes('text/event-stream') && response.body !== null) {
      const call = isToolsCall(options?.parsedBody);
      return call ? streamRefusal(response, response.body) : response;
    }
    if (!type.includes('application/json')) return response;
    const text = await response.text();
    const refusal = refusalOf(response.status, text);
    const headers = new Headers(response.headers);
    for (const [name, value] of Object.entries(refusal.headers ?? {})) headers.set(name, value);
    return new Response(text, { status: refusal.status, headers });
  };
}
