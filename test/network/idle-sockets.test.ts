/**
 * Idle sockets cannot lock other callers out (issue 36): one remote address holds at most its
 * share of `--max-connections`, and once the total nears the cap the sockets with no request
 * in flight are closed, longest idle first. Flooders open idle TCP connections from their own
 * loopback addresses (127.0.0.2, …: distinct remote addresses on Linux) and re-open each as it
 * closes; another caller's fresh connections, from 127.0.0.3, must all be served.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createTaskServer, type TaskServer } from '../../src/server/index.js';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';
import { waitFor } from '../helpers/wait.js';

const MAX_CONNECTIONS = 40;
const CALLER = '127.0.0.3';

/** Idle sockets from `address`, each re-opened as soon as it closes, until `stop()`. */
class Flooder {
  readonly #sockets = new Set<Socket>();
  #stopped = false;
  opened = 0;
  closedByServer = 0;

  constructor(
    readonly port: number,
    readonly address: string,
    count: number,
  ) {
    for (let i = 0; i < count; i++) this.#open();
  }

  get open(): number {
    return this.#sockets.size;
  }

  #open(): void {
    if (this.#stopped) return;
    const socket = connect({ port: this.port, host: '127.0.0.1', localAddress: this.address });
    this.#sockets.add(socket);
    socket.on('connect', () => void (this.opened += 1));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.#sockets.delete(socket);
      if (this.#stopped) return;
      this.closedByServer += 1;
      setImmediate(() => this.#open());
    });
  }

  stop(): void {
    this.#stopped = true;
    for (const socket of this.#sockets) socket.destroy();
  }
}

/** One request on a fresh connection from `address`: its status, or the error it met. */
function freshRequest(port: number, address: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request(
      { port, host: '127.0.0.1', path: '/not-mcp', localAddress: address, agent: false },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    req.end();
  });
}

async function freshRequests(port: number, count: number): Promise<(number | string)[]> {
  const answers: (number | string)[] = [];
  for (let i = 0; i < count; i++) answers.push(await freshRequest(port, CALLER));
  return answers;
}

describe(`idle sockets and --max-connections ${MAX_CONNECTIONS} (real HTTP on 127.0.0.1)`, () => {
  let app: TaskServer;
  let port = 0;
  const flooders: Flooder[] = [];
  const warnings: string[] = [];
  before(async () => {
    const quiet = (): void => undefined;
    app = createTaskServer({
      store: new MemoryTaskStore(),
      http: { maxConnections: MAX_CONNECTIONS },
      logger: {
        info: quiet,
        error: quiet,
        warn: (message, fields) => void warnings.push(`${message} ${JSON.stringify(fields)}`),
      },
    });
    port = Number(new URL((await app.listen(0, '127.0.0.1')).url).port);
  });
  after(async () => {
    for (const flooder of flooders) flooder.stop();
    await app.close(100);
  });

  it('one address holds at most half the sockets: a fresh caller from another is served', async () => {
    const flooder = new Flooder(port, '127.0.0.2', 3 * MAX_CONNECTIONS);
    flooders.push(flooder);
    // The flood is in place: the server has closed sockets past the address's share again and again.
    await waitFor('the flooder hits its cap', () =>
      flooder.closedByServer >= 2 * MAX_CONNECTIONS ? true : undefined,
    );
    const answers = await freshRequests(port, 30);
    assert.deepEqual(
      answers.filter((answer) => answer !== 404),
      [],
      'every fresh connection of the other caller was served',
    );
    const told = warnings.filter((line) => line.includes('127.0.0.2'));
    assert.equal(told.length, 1, 'one warning a minute, not one per refused socket');
    assert.match(told[0] ?? '', /--max-connections-per-address/);
    flooder.stop();
  });

  it('near the cap idle sockets are closed, longest idle first: several flooding addresses do not lock a caller out', async () => {
    const many = ['127.0.0.4', '127.0.0.5', '127.0.0.6'].map(
      (address) => new Flooder(port, address, MAX_CONNECTIONS),
    );
    flooders.push(...many);
    const closed = () => many.reduce((sum, flooder) => sum + flooder.closedByServer, 0);
    await waitFor('the flooders together pass the cap', () =>
      closed() >= 3 * MAX_CONNECTIONS ? true : undefined,
    );
    const answers = await freshRequests(port, 30);
    assert.deepEqual(
      answers.filter((answer) => answer !== 404),
      [],
      'every fresh connection of the other caller was served',
    );
    for (const flooder of many) flooder.stop();
  });

  it('near the cap a socket mid-request stays open, and one answered at once is idle again', async () => {
    // A request whose body is still arriving: the server is serving it.
    const busy = connect({ port, host: '127.0.0.1', localAddress: '127.0.0.7' });
    let busyClosed = false;
    busy.on('close', () => void (busyClosed = true));
    busy.on('error', () => undefined);
    let answer = '';
    busy.on('data', (chunk: Buffer) => void (answer += chunk.toString('utf8')));
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
    await new Promise<void>((resolve) => busy.once('connect', resolve));
    busy.write(
      'POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n' +
        `accept: application/json, text/event-stream\r\ncontent-length: ${body.length}\r\n\r\n` +
        body.slice(0, 10),
    );
    // A keep-alive socket whose request was answered at once (404 here): idle from then on.
    const answered = connect({ port, host: '127.0.0.1', localAddress: '127.0.0.8' });
    let answeredClosed = false;
    answered.on('close', () => void (answeredClosed = true));
    answered.on('error', () => undefined);
    await new Promise<void>((resolve) => answered.once('connect', resolve));
    answered.write('GET /not-mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n');
    await new Promise<void>((resolve) => answered.once('data', () => resolve()));
    const many = ['127.0.0.9', '127.0.0.10'].map((address) => new Flooder(port, address, 20));
    flooders.push(...many);
    const closed = () => many.reduce((sum, flooder) => sum + flooder.closedByServer, 0);
    await waitFor('the flooders pass the cap', () => (closed() >= 40 ? true : undefined));
    for (const flooder of many) flooder.stop();
    assert.equal(answeredClosed, true, 'the answered keep-alive socket was closed as idle');
    assert.equal(busyClosed, false, 'the socket mid-request was never closed');
    busy.write(body.slice(10));
    await waitFor('the finished request is answered', () =>
      answer.includes('"jsonrpc"') ? true : undefined,
    );
    assert.match(answer, /^HTTP\/1\.1 \d{3}/);
    busy.destroy();
  });
});
