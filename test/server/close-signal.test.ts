import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { NodeExchange } from '../../src/server/http/node.js';
import { waitFor } from '../helpers/wait.js';

/**
 * The Node exchange's close signal (a synchronous `tools/call` waits on it): aborted when the
 * caller goes away before the answer, never after a normal answer (an abort builds a
 * DOMException with a stack, which under load cost more than the answer). `onClose` runs on
 * either, as the connection share it gives back needs.
 */
describe('the close signal of a Node request', () => {
  const seen: { signal: AbortSignal; closed: boolean }[] = [];
  let server: Server;
  let port: number;

  before(async () => {
    server = createServer((req, res) => {
      const ex = new NodeExchange(req, res, {});
      const entry = { signal: ex.closed(), closed: false };
      ex.onClose(() => (entry.closed = true));
      seen.push(entry);
      if (req.url === '/answer') ex.json(200, '{}');
      // '/hang' is never answered: the caller gives up.
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => server.close());

  const ask = (path: string) =>
    new Promise<ReturnType<typeof request>>((resolve) => {
      const req = request({ host: '127.0.0.1', port, path, agent: false });
      req.on('error', () => undefined);
      req.on('response', (res) => res.resume());
      req.end();
      resolve(req);
    });

  it('is not aborted once the request was answered, and onClose runs', async () => {
    await ask('/answer');
    const entry = await waitFor('the answered response closed', () => {
      const last = seen.at(-1);
      return last?.closed === true ? last : undefined;
    });
    assert.equal(entry.signal.aborted, false);
  });

  it('is aborted when the caller goes away before the answer, and onClose runs', async () => {
    const count = seen.length;
    const req = await ask('/hang');
    const entry = await waitFor('the request reached the server', () => seen[count]);
    req.destroy();
    await waitFor('the unanswered response closed', () => (entry.closed ? true : undefined));
    assert.equal(entry.signal.aborted, true);
  });
});
