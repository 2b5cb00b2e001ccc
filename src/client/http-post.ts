import http from 'node:http';
import https from 'node:https';
import { urlToHttpOptions } from 'node:url';
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

/** What `http.request(url, options)` derives from the URL, derived once per URL object. */
interface Target {
  readonly options: http.RequestOptions;
  readonly transport: typeof http | typeof https;
}

const targets = new WeakMap<URL, Target>();

function targetOf(url: URL): Target {
  let target = targets.get(url);
  if (target === undefined) {
    const secure = url.protocol === 'https:';
    target = {
      options: {
        ...urlToHttpOptions(url),
        method: 'POST',
        agent: secure ? agents.https : agents.http,
      },
      transport: secure ? https : http,
    };
    targets.set(url, target);
  }
  return target;
}

/**
 * POST on `node:http` with keep-alive agents. Written by hand because Node 20's `fetch` costs a
 * task client about half a millisecond more per request (its Request, Headers and Response
 * objects and web streams), and a task client makes many small requests: the create, then
 * polls. The request options are derived from the URL once per URL object (parsing them out of
 * the URL on every request cost a client about 0.1 ms a call). Redirects are not followed.
 */
export const nodePost: HttpPost = (url, headers, body, signal, timeoutMs) => {
  if (signal?.aborted === true) return Promise.reject(signal.reason);
  const { options, transport } = targetOf(url);
  const requestOptions: http.RequestOptions = {
    ...options,
    headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
  };
  return new Promise<HttpAnswer>((resolve, reject) => {
    let response: http.IncomingMessage | undefined;
    const request = transport.request(requestOptions, (incoming) => {
      clearTimeout(timer);
      response = incoming;
      resolve(answerOf(incoming));
    });
    const timer = setTimeout(
      () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    // Once the answer came, the answer is what is cut: destroying the request instead can race
    // the body's last bytes, which free the socket to the pool just before it is destroyed,
    // and its error then has no listener.
    const abort = (): void => void (response ?? request).destroy(signal?.reason as Error);
    const forget = signal === undefined ? undefined : onAbort(signal, abort);
    request.on('error', (error) => {
      clearTimeout(timer);
      reject(signal?.aborted === true ? signal.reason : error);
    });
    request.on('close', () => forget?.());
    request.end(body);
  });
};

/** The requests riding each signal: one 'abort' listener per signal, however many there are. */
const riders = new WeakMap<AbortSignal, Set<() => void>>();

/**
 * Runs `abort` when `signal` aborts; returns the function that forgets it. A signal shared by
 * many requests at once (`tasks list` polls every task under one deadline) gets one listener,
 * not one per request: Node warns of a leak past ten.
 */
function onAbort(signal: AbortSignal, abort: () => void): () => void {
  let aborts = riders.get(signal);
  if (aborts === undefined) {
    const fresh = new Set<() => void>();
    signal.addEventListener('abort', () => fresh.forEach((run) => run()), { once: true });
    riders.set(signal, (aborts = fresh));
  }
  aborts.add(abort);
  const mine = aborts;
  return () => void mine.delete(abort);
}

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
