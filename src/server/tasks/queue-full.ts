import { ProtocolError } from '@modelcontextprotocol/server';
import type { WireError } from '../../protocol/index.js';
import { isQueueFull, type QueueFullError } from '../../runtime/queue-cap.js';
import { rpcErrorObject } from '../../task/errors.js';
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

/**
 * The HTTP status and extra headers of a JSON answer: a queue-full refusal goes out as 429 with
 * `Retry-After`, store trouble as 503, anything else as it came.
 */
export function refusalOf(
  status: number,
  text: string,
): { status: number; headers?: Record<string, string> } {
  const retryAfter =
    status === 200 || status === QUEUE_FULL_STATUS ? queueFullRetryAfter(text) : undefined;
  if (retryAfter === undefined) return { status: troubleStatus(status, text) };
  return { status: QUEUE_FULL_STATUS, headers: { 'retry-after': String(Math.ceil(retryAfter)) } };
}

function isJson(response: Response): boolean {
  return response.headers.get('content-type')?.includes('application/json') === true;
}

type FetchLike<O> = (request: Request, options: O) => Promise<Response>;

/**
 * Wraps an SDK fetch handler so that a JSON answer carrying the store-trouble -32603 goes out
 * with HTTP 503, and a queue-full refusal with 429 and `Retry-After`, instead of 200 (a plain
 * proxy or host then also sees it). An SSE answer has sent its 200 before the error is known;
 * its JSON-RPC error still says what to do.
 */
export function withRefusalStatus<O>(fetch: FetchLike<O>): FetchLike<O> {
  return async (request, options) => {
    const response = await fetch(request, options);
    if (response.status !== 200 || !isJson(response)) return response;
    const text = await response.text();
    const refusal = refusalOf(response.status, text);
    const headers = new Headers(response.headers);
    for (const [name, value] of Object.entries(refusal.headers ?? {})) headers.set(name, value);
    return new Response(text, { status: refusal.status, headers });
  };
}
