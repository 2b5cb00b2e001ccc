import type { IncomingMessage, ServerResponse } from 'node:http';
import { readNodeBody } from '../http/body.js';

const MAX_BODY = 1024 * 1024;

function requestOf(req: IncomingMessage, body: string | undefined, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  const url = `http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`;
  return new Request(url, {
    method: req.method ?? 'GET',
    headers,
    signal,
    ...(body === undefined ? {} : { body }),
  });
}

/** Serves a web-standard handler on `node:http`, streaming the body (SSE) as it comes. */
export async function serveOnNode(
  handler: (request: Request) => Promise<Response>,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const gone = new AbortController();
  res.once('close', () => gone.abort());
  let body: string | undefined;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    const read = await readNodeBody(req, MAX_BODY);
    if (!read.ok) {
      res.writeHead(read.reason === 'too-large' ? 413 : 400).end();
      return;
    }
    body = read.text;
  }
  const response = await handler(requestOf(req, body, gone.signal));
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (response.body === null) return void res.end();
  res.flushHeaders();
  const reader = response.body.getReader();
  gone.signal.addEventListener('abort', () => void reader.cancel().catch(() => undefined));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      res.write(value);
    }
  } catch {
    // The client went away mid-stream.
  }
  res.end();
}
