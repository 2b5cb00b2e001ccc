import http from 'node:http';
import https from 'node:https';
import { readBoundedText, type ByteStream } from './sse.js';

/** One HTTP answer, read however the transport reads it. */
export interface HttpAnswer {
  status: number;
  contentType: string;
  /** The `WWW-Authenticate` challenge of a 401/403, if any. */
  wwwAuthenticate: string | undefined;
  text(): Promise<string>;
  /** The body as a stream (for SSE), or null when there is none. */
  stream(): ByteStream | null;
  discard(): Promise<void>;
}

export type HttpPost = (
  url: URL,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal | undefined,
  timeoutMs: number,
) => Promise<HttpAnswer>;

const agents = {
  http: new http.Agent({ keepAlive: true }),
  https: new https.Agent({ keepAlive: true }),
};

/**
 * POST on `node:http` with keep-alive agents. Written by hand because Node 20's `fetch` costs a
 * task client about half a millisecond more per request (its Request, Headers and Response
 * objects and web streams), and a task client makes many small requests: the create, then
 * polls. Redirects are not followed.
 */
export const nodePost: HttpPost = (url, headers, body, signal, timeoutMs) => {
  if (signal?.aborted === true) return Promise.reject(signal.reason);
  const secure = url.protocol === 'https:';
  const options = {
    method: 'POST',
    headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
    agent: secure ? agents.https : agents.http,
  };
  return new Promise<HttpAnswer>((resolve, reject) => {
    const request = (secure ? https : http).request(url, options, (incoming) => {
      clearTimeout(timer);
      resolve(answerOf(incoming));
    });
    const timer = setTimeout(
      () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const abort = (): void => void request.destroy(signal?.reason as Error);
    signal?.addEventListener('abort', abort, { once: true });
    request.on('error', (error) => {
      clearTimeout(timer);
      reject(signal?.aborted === true ? signal.reason : error);
    });
    request.on('close', () => signal?.removeEventListener('abort', abort));
    request.end(body);
  });
};

function answerOf(incoming: http.IncomingMessage): HttpAnswer {
  return {
    status: incoming.statusCode ?? 502,
    contentType: incoming.headers['content-type'] ?? '',
    wwwAuthenticate: incoming.headers['www-authenticate'],
    text: () => readBoundedText(incoming),
    stream: () => incoming,
    discard: async () => void incoming.resume(),
  };
}

/** The same answer shape over a caller's own `fetch` (tests, custom transports). */
export function fetchPost(doFetch: typeof fetch): HttpPost {
  return async (url, headers, body, signal, timeoutMs) => {
    const timeout = AbortSignal.timeout(timeoutMs);
    const response = await doFetch(url, {
      method: 'POST',
      headers,
      body,
      signal: signal === undefined ? timeout : AbortSignal.any([signal, timeout]),
    });
    return {
      status: response.status,
      contentType: response.headers.get('content-type') ?? '',
      wwwAuthenticate: response.headers.get('www-authenticate') ?? undefined,
      text: () => readBoundedText(response.body),
      stream: () => response.body,
      discard: async () => void (await response.body?.cancel()),
    };
  };
}
