import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { nodePost } from '../../src/client/http-post.js';

describe('nodePost (the client transport on node:http)', () => {
  let server: http.Server;
  let base: string;
  const seen: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];
  before(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        seen.push({ headers: req.headers, body });
        if (req.url === '/silent') return; // never answers
        if (req.url === '/sse') {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.end('data: {"a":1}\n\n');
          return;
        }
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ echo: body }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('sends the headers and body, and reads status, type and text', async () => {
    const answer = await nodePost(new URL(`${base}/json`), { 'x-one': '1' }, 'hé', undefined, 5000);
    assert.equal(answer.status, 201);
    assert.equal(answer.contentType, 'application/json');
    assert.deepEqual(JSON.parse(await answer.text()), { echo: 'hé' });
    const last = seen.at(-1);
    assert.equal(last?.headers['x-one'], '1');
    assert.equal(last?.headers['content-length'], String(Buffer.byteLength('hé')));
  });

  it('hands an event stream over as a byte stream', async () => {
    const answer = await nodePost(new URL(`${base}/sse`), {}, '', undefined, 5000);
    const stream = answer.stream();
    assert.ok(stream);
    let text = '';
    for await (const chunk of stream) text += Buffer.from(chunk).toString();
    assert.equal(text, 'data: {"a":1}\n\n');
  });

  it('rides one signal on many requests at once without a listener warning', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const controller = new AbortController();
      const pending = Array.from({ length: 12 }, () =>
        nodePost(new URL(`${base}/silent`), {}, '', controller.signal, 5000),
      );
      controller.abort(new Error('enough'));
      const settled = await Promise.allSettled(pending);
      assert.ok(settled.every((one) => one.status === 'rejected'));
      // A warning is emitted on the next tick: give it one before looking.
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(warnings, []);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('gives up at the timeout, and on the caller’s abort with its reason', async () => {
    await assert.rejects(
      nodePost(new URL(`${base}/silent`), {}, '', undefined, 50),
      /no answer within 50 ms/,
    );
    const controller = new AbortController();
    const pending = nodePost(new URL(`${base}/silent`), {}, '', controller.signal, 5000);
    controller.abort(new Error('caller stopped'));
    await assert.rejects(pending, /caller stopped/);
    await assert.rejects(
      nodePost(new URL(`${base}/json`), {}, '', controller.signal, 5000),
      /caller stopped/,
      'an aborted signal sends nothing',
    );
  });

  it('rejects when nothing listens', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await assert.rejects(
      nodePost(new URL(`http://127.0.0.1:${port}/`), {}, '', undefined, 5000),
      /ECONNREFUSED/,
    );
  });
});
