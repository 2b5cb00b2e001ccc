import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';

const REFUSED = JSON.stringify({
  jsonrpc: '2.0',
  id: null,
  error: { code: -32000, message: 'Bad Request: unsupported protocol version' },
});

export interface Front {
  url: string;
  close(): Promise<void>;
}

/** A front that refuses the 2026-07-28 wire, making a taskrail server look like one that speaks only 2025-11-25. */
export function only2025Proxy(target: string): Promise<Front> {
  return countingProxy(target, { only2025: true });
}

/**
 * A front that passes every request through (refusing the 2026-07-28 wire with `only2025`) and
 * counts them by JSON-RPC method (`GET` for a standalone stream), so a test can see what a
 * client asked. Responses, notifications included, are not counted.
 */
export async function countingProxy(
  target: string,
  options: { only2025?: boolean } = {},
): Promise<Front & { counts: Map<string, number> }> {
  const counts = new Map<string, number>();
  const count = (method: string): void => void counts.set(method, (counts.get(method) ?? 0) + 1);
  const forward = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (options.only2025 === true && req.headers['mcp-protocol-version'] === '2026-07-28') {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(REFUSED);
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.method === 'GET') count('GET');
    else countMethods(Buffer.concat(chunks), count);
    const headers = new Headers();
    for (const [key, value] of Object.entries(req.headers)) {
      if (typeof value === 'string' && key !== 'host' && key !== 'content-length')
        headers.set(key, value);
    }
    const upstream = await fetch(target, {
      method: req.method ?? 'GET',
      headers,
      ...(chunks.length === 0 ? {} : { body: Buffer.concat(chunks) }),
    });
    res.writeHead(upstream.status, Object.fromEntries(upstream.headers));
    if (upstream.body === null) return void res.end();
    // A stream the client or the server ends early (a standalone GET) ends here too, quietly.
    const body = Readable.fromWeb(upstream.body as never);
    body.on('error', () => res.destroy());
    res.on('close', () => body.destroy());
    body.pipe(res);
  };
  const http = createServer((req, res) => void forward(req, res).catch(() => res.destroy()));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    counts,
    url: `http://127.0.0.1:${port}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      }),
  };
}

function countMethods(body: Buffer, count: (method: string) => void): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return;
  }
  for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
    const method = (message as { method?: unknown } | null)?.method;
    if (typeof method === 'string') count(method);
  }
}
