import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/server';
import { refusalOf } from '../tasks/queue-full.js';
import { RPC } from '../../task/errors.js';

type SdkFetch = (
  request: Request,
  options: { authInfo?: AuthInfo; parsedBody?: unknown },
) => Promise<Response>;

/** Headers a bodiless Request must not carry from the body it no longer has. */
const BODY_HEADERS = new Set(['content-length', 'content-encoding', 'transfer-encoding']);

/**
 * The web Request the SDK handler gets for a body the front already read and parsed. The SDK
 * reads `parsedBody` and never the Request's body, so none is attached: the SDK's own Node
 * adapter would serialize the parsed body again and copy it into a body stream.
 */
function bodilessRequest(req: IncomingMessage, signal: AbortSignal): Request {
  const host = req.headers.host ?? 'localhost';
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith(':') || BODY_HEADERS.has(name)) continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  return new Request(`http://${host}${req.url ?? '/'}`, {
    method: req.method ?? 'POST',
    headers,
    signal,
  });
}

/** The JSON-RPC id the SDK's Node adapter echoes on its own 500 answer. */
function echoableId(body: unknown): string | number | null {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return null;
  const { method, id } = body as { method?: unknown; id?: unknown };
  if (typeof method !== 'string') return null;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

function internalError(parsed: unknown): Response {
  const body = { code: RPC.INTERNAL_ERROR, message: 'Internal server error' };
  return Response.json({ jsonrpc: '2.0', error: body, id: echoableId(parsed) }, { status: 500 });
}

async function streamOut(
  response: Response & { body: ReadableStream<Uint8Array> },
  res: ServerResponse,
  abort: AbortSignal,
): Promise<void> {
  const closed = new Promise<void>((resolve) =>
    abort.addEventListener('abort', () => resolve(), { once: true }),
  );
  try {
    for await (const chunk of response.body) {
      if (abort.aborted) break;
      if (!res.write(chunk)) {
        await Promise.race([new Promise((resolve) => res.once('drain', resolve)), closed]);
      }
    }
  } catch {
    // the client went away mid-stream
  }
  res.end();
}

/**
 * Hands a POST whose body the front parsed to the SDK's web handler and writes its answer, as
 * the SDK's `toNodeHandler` does (same status, headers, body and chunked framing), minus its
 * per-request costs: no re-serialized body, and a JSON answer leaves in one write instead of
 * through a stream reader. A JSON answer carrying store trouble gets HTTP 503.
 */
export async function answerWithSdk(
  fetch: SdkFetch,
  req: IncomingMessage & { auth?: AuthInfo },
  res: ServerResponse,
  parsed: unknown,
): Promise<void> {
  let finished = false;
  const abort = new AbortController();
  res.on('close', () => {
    if (!finished) abort.abort();
  });
  if (res.destroyed) abort.abort();
  let response: Response;
  try {
    const options = {
      ...(req.auth === undefined ? {} : { authInfo: req.auth }),
      parsedBody: parsed,
    };
    response = await fetch(bodilessRequest(req, abort.signal), options);
  } catch {
    response = internalError(parsed);
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of response.headers) headers[name] = value;
  if (response.body === null) {
    finished = true;
    res.writeHead(response.status, headers);
    return void res.end();
  }
  if (headers['content-type']?.includes('application/json') === true) {
    const text = await response.text();
    finished = true;
    const refusal = refusalOf(response.status, text);
    res.writeHead(refusal.status, { ...headers, ...refusal.headers });
    return void res.end(text);
  }
  res.writeHead(response.status, headers);
  await streamOut(response as Response & { body: ReadableStream<Uint8Array> }, res, abort.signal);
  finished = true;
}
