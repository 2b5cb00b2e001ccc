/**
 * A pushed notification leaves in the turn it is written (server/listen/sse-sink.ts): Node's
 * `res.write` corks the socket until the next tick, and `flush` writes it once the promise
 * callbacks queued so far have run. Real node:http on 127.0.0.1; the bytes still held are read on
 * the server's socket.
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

/** The server socket's cork count and bytes held back, read after the callbacks queued so far. */
interface Seen {
  corked: number;
  corkedAfter: number;
  heldAfter: number;
}

/**
 * Writes two notifications in one chain of promise callbacks, as store events arrive (one per
 * task of a commit), asks for a flush after each, and looks at the socket in a callback queued
 * after them: before Node's own uncork on the next tick.
 */
function pushTwo(res: ServerResponse, seen: Seen[], flush: boolean): void {
  const sink = nodeSink(res, 1024 * 1024);
  const socket = res.socket;
  assert.ok(socket !== null);
  const note = (status: string) => ({
    jsonrpc: '2.0',
    method: 'notifications/tasks',
    params: { status },
  });
  void Promise.resolve().then(() => {
    sink.send(note('working'));
    if (flush) sink.flush();
    const corked = socket.writableCorked;
    void Promise.resolve().then(() => {
      sink.send(note('completed'));
      if (flush) sink.flush();
      queueMicrotask(() => {
        seen.push({ corked, corkedAfter: socket.writableCorked, heldAfter: socket.writableLength });
        setImmediate(() => sink.end());
      });
    });
  });
}

describe('a listen stream on node:http', () => {
  it('writes notifications once the queued callbacks have run, not on the next tick', async () => {
    const seen: Seen[] = [];
    const text = await withResponse((res) => pushTwo(res, seen, true));
    const [at] = seen;
    assert.ok(at !== undefined);
    assert.ok(at.corked > 0, 'node:http holds a response write until the next tick');
    assert.equal(at.corkedAfter, 0);
    assert.equal(at.heldAfter, 0, 'the headers and both events left before the tick');
    const events = text.split('\n\n').filter((event) => event.startsWith('event: message'));
    assert.equal(events.length, 2);
    assert.match(text, /"status":"working".*\n\n.*"status":"completed"/s);
  });

  it('leaves them to the next tick without a flush (what the test above measures against)', async () => {
    const seen: Seen[] = [];
    await withResponse((res) => pushTwo(res, seen, false));
    const [at] = seen;
    assert.ok(at !== undefined);
    assert.ok(at.corkedAfter > 0);
    assert.ok(at.heldAfter > 0);
  });
});
