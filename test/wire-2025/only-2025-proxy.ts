import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';

const REFUSED = JSON.stringify({
  jsonrpc: '2.0',
  id: null,
  error: { code: -32000, message: 'Bad Request: unsupported protocol version' },
});

/** A front that refuses the 2026-07-28 wire, making a taskrail server look like one that speaks only 2025-11-25. */
export async function only2025Proxy(
  target: string,
): Promise<{ url: string; close(): Promise<void> }> {
  const forward = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.headers['mcp-protocol-version'] === '2026-07-28') {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(REFUSED);
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
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
    Readable.fromWeb(upstream.body as never).pipe(res);
  };
  const http = createServer((req, res) => void forward(req, res).catch(() => res.destroy()));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      }),
  };
}
