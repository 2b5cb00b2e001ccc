import assert from 'node:assert/strict';
import { Agent, createServer, request, type Server } from 'node:http';
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

  const ask = (path: string, agent: Agent | false = false) =>
    new Promise<ReturnType<typeof request>>((resolve) => {
      const req = request({ host: '127.0.0.1', port, path, agent });
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

  // One signal per keep-alive connection (no AbortController per request): an answered
  // request's close of the connection aborts nothing; an unanswered one's does.
  it('on a keep-alive connection, is aborted only when it closes with a request unanswered', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const count = seen.length;
    await ask('/answer', agent);
    const first = await waitFor('the first answer', () => seen[count]);
    await waitFor('the keep-alive socket is free', () =>
      Object.keys(agent.freeSockets).length > 0 ? true : undefined,
    );
    const req = await ask('/hang', agent);
    const second = await waitFor('the second request', () => seen[count + 1]);
    assert.equal(second.signal.aborted, false);
    req.destroy();
    await waitFor('the unanswered response closed', () => (second.closed ? true : undefined));
    assert.equal(second.signal.aborted, true);
    assert.equal(first.closed, true);
    agent.destroy();
  });

  it('on a keep-alive connection closed after its answers, is never aborted', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const count = seen.length;
    await ask('/answer', agent);
    await waitFor('the first answer', () => seen[count]);
    await waitFor('the keep-alive socket is free', () =>
      Object.keys(agent.freeSockets).length > 0 ? true : undefined,
    );
    await ask('/answer', agent);
    const second = await waitFor('the second answer', () => seen[count + 1]);
    await waitFor('the keep-alive socket is free again', () =>
      Object.keys(agent.freeSockets).length > 0 ? true : undefined,
    );
    agent.destroy();
    await waitFor('the connection closed', () => (second.closed ? true : undefined));
    assert.equal(second.signal.aborted, false);
  });
});
