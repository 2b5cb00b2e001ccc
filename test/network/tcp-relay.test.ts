import assert from 'node:assert/strict';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { startNode } from '../helpers/child.js';
import { startTcpRelay } from '../helpers/tcp-relay.js';
import { waitFor } from '../helpers/wait.js';

/** An echo server that also counts the bytes it received. */
let echo: Server;
let echoPort = 0;
let received = 0;

before(async () => {
  echo = createServer((socket) => {
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
      socket.write(chunk);
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  echoPort = (echo.address() as AddressInfo).port;
});

after(() => new Promise<void>((resolve) => echo.close(() => resolve())));

interface Probe {
  socket: Socket;
  text: () => string;
  closed: () => boolean;
  errorCode: () => string | undefined;
}

function open(port: number): Probe {
  const socket = connect({ host: '127.0.0.1', port });
  let text = '';
  let closed = false;
  let errorCode: string | undefined;
  socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
  socket.on('error', (error: NodeJS.ErrnoException) => (errorCode = error.code));
  socket.on('close', () => (closed = true));
  return { socket, text: () => text, closed: () => closed, errorCode: () => errorCode };
}

test('pass relays bytes both ways; urlFor points a store URL at the relay', async () => {
  const relay = await startTcpRelay({ port: echoPort });
  try {
    const probe = open(relay.port);
    probe.socket.write('hello');
    await waitFor('the echo through the relay', () => probe.text() === 'hello');
    assert.equal(relay.openConnections, 1);
    assert.equal(relay.urlFor('redis://db.example:6379/3'), `redis://127.0.0.1:${relay.port}/3`);
    probe.socket.destroy();
    await waitFor('the relay to drop the closed connection', () => relay.openConnections === 0);
  } finally {
    await relay.close();
  }
});

test('blackhole keeps the socket open and drops every byte; the heal resets holed streams', async () => {
  const relay = await startTcpRelay({ port: echoPort });
  try {
    const quiet = open(relay.port);
    const busy = open(relay.port);
    await waitFor('both connections', () => relay.openConnections === 2);
    const before = received;
    relay.setMode('blackhole');
    busy.socket.write('lost');
    await waitFor('the relay to drop the bytes', () => relay.droppedBytes === 4);
    assert.equal(received, before, 'no byte reached the server');
    assert.equal(busy.text(), '');
    assert.equal(busy.closed(), false, 'a blackhole keeps the socket open');
    const late = open(relay.port);
    await waitFor('a connection accepted inside the blackhole', () => relay.openConnections === 3);

    relay.setMode('pass');
    await waitFor('the holed stream to be reset', () => busy.closed());
    assert.equal(quiet.closed(), false, 'a connection that lost nothing survives the heal');
    quiet.socket.write('again');
    await waitFor('the quiet connection to work after the heal', () => quiet.text() === 'again');
    late.socket.write('late');
    await waitFor('the connection opened in the cut to work', () => late.text() === 'late');
    quiet.socket.destroy();
    late.socket.destroy();
  } finally {
    await relay.close();
  }
});

test('reset resets open connections and every new one until the mode changes', async () => {
  const relay = await startTcpRelay({ port: echoPort });
  try {
    const probe = open(relay.port);
    await waitFor('the connection', () => relay.openConnections === 1);
    relay.setMode('reset');
    await waitFor('the open connection to be reset', () => probe.closed());
    assert.equal(probe.errorCode(), 'ECONNRESET');
    const refused = open(relay.port);
    await waitFor('a new connection to be reset', () => refused.closed());
    assert.equal(relay.openConnections, 0);

    relay.setMode('pass');
    const healed = open(relay.port);
    healed.socket.write('back');
    await waitFor('a connection after the heal', () => healed.text() === 'back');
    healed.socket.destroy();
  } finally {
    await relay.close();
  }
});

test('latency delivers every chunk, in order, both ways', async () => {
  const relay = await startTcpRelay({ port: echoPort }, { mode: 'latency', latencyMs: 30 });
  try {
    const probe = open(relay.port);
    const words = Array.from({ length: 20 }, (_, i) => `w${i};`);
    for (const word of words) probe.socket.write(word);
    relay.setMode('latency', 5); // a shorter delay must not let later chunks overtake
    probe.socket.write('end;');
    const expected = words.join('') + 'end;';
    await waitFor('every delayed chunk', () => probe.text() === expected);
    probe.socket.destroy();
  } finally {
    await relay.close();
  }
});

test('latency mode without a delay is refused with what to pass', async () => {
  const relay = await startTcpRelay({ port: echoPort });
  try {
    assert.throws(() => relay.setMode('latency'), /latencyMs/);
  } finally {
    await relay.close();
  }
});

test('close frees the port and ends every connection', async () => {
  const relay = await startTcpRelay({ port: echoPort });
  const probe = open(relay.port);
  await waitFor('the connection', () => relay.openConnections === 1);
  relay.setMode('blackhole');
  await relay.close();
  await waitFor('the connection to end', () => probe.closed());
  const after = open(relay.port);
  await waitFor('the freed port to refuse', () => after.closed());
  assert.equal(after.errorCode(), 'ECONNREFUSED');
  await relay.close(); // a second close is harmless
});

for (const heal of ['pass', 'reset'] as const) {
  test(`a process whose relay switched to ${heal} as a client hung up exits once all is closed`, async () => {
    const child = startNode('.build/test/fixtures/relay-half-close.js', [heal]);
    try {
      await child.line(/^done/, 15_000);
      await waitFor('the process to exit', () => child.process.exitCode !== null, {
        timeoutMs: 10_000,
      });
      assert.equal(child.process.exitCode, 0, child.stderr());
    } finally {
      await child.kill('SIGKILL');
    }
  });
}
