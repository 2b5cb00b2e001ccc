/**
 * A pushed notification leaves in the turn it is written (server/listen/sse-sink.ts): Node's
 * `res.write` corks the socket until the next tick, and `flush` writes it now. Real node:http on
 * 127.0.0.1; the bytes are counted on the server's socket.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { nodeSink } from '../../src/server/listen/sse-sink.js';

/** Serves one request, hands its response to `take`, and reads the client's side to the end. */
async function withResponse(take: (res: ServerResponse) => void): Promise<string> {
  const server = createServer((_req, res) => take(res));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  try {
    const req = request({ port, host: '127.0.0.1', method: 'POST' });
    req.end();
    const [res] = (await once(req, 'response')) as [NodeJS.ReadableStream];
    let text = '';
    res.setEncoding('utf8');
    for await (const chunk of res) text += String(chunk);
    return text;
  } finally {
    server.close();
  }
}

describe('a listen stream on node:http', () => {
  it('writes a notification to the socket at flush, not on the next tick', async () => {
    const seen: { corked: number; bytes: number; flushedBytes: number; corkedAfter: number }[] = [];
    const text = await withResponse((res) => {
      const sink = nodeSink(res, 1024 * 1024);
      const socket = res.socket;
      assert.ok(socket !== null);
      const bytes = socket.bytesWritten;
      sink.send({ jsonrpc: '2.0', method: 'notifications/tasks', params: { status: 'completed' } });
      const corked = socket.writableCorked;
      sink.flush();
      seen.push({
        corked,
        bytes,
        flushedBytes: socket.bytesWritten,
        corkedAfter: socket.writableCorked,
      });
      setImmediate(() => sink.end());
    });
    const [at] = seen;
    assert.ok(at !== undefined);
    assert.ok(at.corked > 0, 'node:http holds a response write until the next tick');
    assert.equal(at.corkedAfter, 0);
    assert.ok(at.flushedBytes > at.bytes, 'the headers and the event left at flush');
    assert.match(text, /^event: message\ndata: \{"jsonrpc":"2\.0","method":"notifications\/tasks"/);
  });
});
