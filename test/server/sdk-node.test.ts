import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { lazySdkNodeHandler } from '../../src/server/http/sdk-node.js';
import { httpText } from './support.js';

/** What the server hands on as already parsed when a request says `x-parsed: yes`. */
const PARSED = { jsonrpc: '2.0', id: 9 };

interface Seen {
  method: string;
  body: string;
  parsedBody: unknown;
}

function send(
  port: number,
  method: string,
  body?: string,
): Promise<{ status: number; text: string }> {
  return httpText(port, { method, path: '/mcp', ...(body === undefined ? {} : { body }) });
}

describe("the SDK's Node adapter, loaded on first use", () => {
  const seen: Seen[] = [];
  let server: Server;
  let port: number;

  before(async () => {
    const handler = lazySdkNodeHandler(
      {
        fetch: async (req, options) => {
          const body = await req.text();
          seen.push({ method: req.method, body, parsedBody: options?.parsedBody });
          return new Response(`${req.method} ${body}`, { status: 200 });
        },
      },
      64,
    );
    server = createServer((req, res) => {
      void handler(req, res, req.headers['x-parsed'] === 'yes' ? PARSED : undefined);
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    port = (server.address() as AddressInfo).port;
  });
  after(() => server.close());

  it('answers every request that arrived while it loaded, each with its own body', async () => {
    const bodies = ['first', 'second', 'third', 'fourth'];
    const replies = await Promise.all([
      ...bodies.map((body) => send(port, 'POST', body)),
      send(port, 'GET'),
    ]);
    assert.deepEqual(
      replies.map((reply) => [reply.status, reply.text]),
      [...bodies.map((body) => [200, `POST ${body}`]), [200, 'GET ']],
    );
    assert.equal(seen.length, 5, 'each request reached the handler once');
  });

  it('hands a body parsed before it on to the handler', async () => {
    const reply = await httpText(port, {
      method: 'POST',
      path: '/mcp',
      headers: { 'x-parsed': 'yes' },
      body: '{"jsonrpc":"2.0","id":9}',
    });
    assert.equal(reply.status, 200);
    assert.deepEqual(seen.at(-1)?.parsedBody, PARSED);
  });

  it('keeps the body limit it was given: a larger body is refused with 413', async () => {
    const before = seen.length;
    const reply = await send(port, 'POST', 'x'.repeat(65));
    assert.equal(reply.status, 413);
    assert.equal(seen.length, before, 'the handler never saw it');
  });
});
