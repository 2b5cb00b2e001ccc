import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createTaskServer, type TaskServer } from '../../src/server/index.js';
import type { SessionLimits } from '../../src/server/index.js';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';
import { waitFor } from '../helpers/wait.js';
import { rawInitialize, rawSessionStatus } from '../helpers/raw-session.js';

const TOKENS = { 'tok-a': 'alice', 'tok-b': 'bob', 'tok-c': 'carol' };

async function start(
  sessions: SessionLimits,
  http = {},
): Promise<{ app: TaskServer; url: string }> {
  const app = createTaskServer({
    store: new MemoryTaskStore(),
    auth: { tokens: TOKENS },
    wire2025Sessions: sessions,
    http,
  }).tool('noop', { description: 'x', task: true }, async () => ({ content: [] }));
  const { url } = await app.listen(0);
  return { app, url };
}

/** A 2025-11-25 `initialize`; resolves with the HTTP status, session id and JSON-RPC error. */
async function initialize(url: string, token: string) {
  const { status, session, error } = await rawInitialize(url, { token });
  return { status, session, error };
}

/** A request on an open session (`ping` unless said): 404 once the session is gone. */
async function ping(url: string, token: string, session: string, method = 'ping'): Promise<number> {
  return rawSessionStatus(url, { token, session }, method);
}

describe('2025-11-25 session caps', () => {
  let strict: { app: TaskServer; url: string };
  let evicting: { app: TaskServer; url: string };
  before(async () => {
    const caps = { maxSessions: 3, maxSessionsPerPrincipal: 2 };
    strict = await start({ ...caps, evictAfterIdleMs: 60_000 });
    evicting = await start({ ...caps, evictAfterIdleMs: 1 });
  });
  after(async () => {
    await strict.app.close(500);
    await evicting.app.close(500);
  });

  it('refuses a caller past its own cap with a clean JSON-RPC error while its sessions are fresh', async () => {
    for (let i = 0; i < 2; i++) assert.ok((await initialize(strict.url, 'tok-a')).session);
    const refused = await initialize(strict.url, 'tok-a');
    assert.equal(refused.status, 429);
    assert.equal(refused.session, null);
    assert.equal(refused.error?.code, -32000);
    assert.match(refused.error?.message ?? '', /Too many open sessions for one caller: at most 2/);
    assert.ok((await initialize(strict.url, 'tok-b')).session, 'another caller still gets one');
    // The cap is full and alice holds more than half: her least recently used idle session
    // makes room for carol (fair-bounds.test.ts shows it in detail).
    assert.ok((await initialize(strict.url, 'tok-c')).session, 'a third caller still gets one');
    const again = await initialize(strict.url, 'tok-a');
    assert.equal(again.status, 429, 'alice is at her share now that others hold sessions');
  });

  it('closes the least recently used idle session to make room', async () => {
    const first = (await initialize(evicting.url, 'tok-a')).session as string;
    const second = (await initialize(evicting.url, 'tok-a')).session as string;
    // Work, not a ping: a ping does not renew a session (session-pings.test.ts).
    assert.equal(await ping(evicting.url, 'tok-a', second, 'tools/list'), 200, 'second used last');
    const third = await initialize(evicting.url, 'tok-a');
    assert.ok(third.session, JSON.stringify(third));
    assert.equal(await ping(evicting.url, 'tok-a', first), 404, 'the oldest idle one was closed');
    assert.equal(await ping(evicting.url, 'tok-a', second), 200);
  });
});

function rawSocket(url: string): Promise<Socket> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

function closed(socket: Socket): Promise<string> {
  let data = '';
  socket.on('data', (chunk: Buffer) => (data += chunk.toString()));
  socket.on('error', () => undefined);
  return new Promise((resolve) => socket.once('close', () => resolve(data)));
}

describe('socket limits of listen()', () => {
  let server: { app: TaskServer; url: string };
  before(async () => {
    server = await start({}, { headersTimeoutMs: 400, keepAliveTimeoutMs: 300, maxConnections: 3 });
  });
  after(async () => server.app.close(500));

  it('closes a socket whose headers never finish (408)', async () => {
    const socket = await rawSocket(server.url);
    const done = closed(socket);
    socket.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
    assert.match(await done, /408/);
  });

  it('closes an idle keep-alive socket', async () => {
    const socket = await rawSocket(server.url);
    const done = closed(socket);
    socket.write('GET /nothing HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n');
    // Node's own default keeps it 5 s: closing well before that shows the setting took.
    const deadline = new Promise<string>((resolve) =>
      setTimeout(() => resolve('still open'), 3000),
    );
    assert.match(await Promise.race([done, deadline]), /HTTP\/1\.1 404/);
    socket.destroy();
  });
});

describe('connection cap of listen()', () => {
  let server: { app: TaskServer; url: string };
  before(async () => {
    server = await start({}, { maxConnections: 2, maxConnectionsPerAddress: 2 });
  });
  after(async () => server.app.close(500));

  /**
   * A socket busy with a request (idle ones are closed near the cap, idle-sockets.test.ts): a
   * POST whose body never comes. Node answers `Expect: 100-continue` just before it hands the
   * request on, so the 100 shows the request is in flight.
   */
  async function busySocket(token: string): Promise<Socket> {
    const socket = await rawSocket(server.url);
    const continued = new Promise((resolve) => socket.once('data', resolve));
    socket.write(
      'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
        `Authorization: Bearer ${token}\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n`,
    );
    await continued;
    return socket;
  }

  it('drops sockets past the cap and accepts again once one closes', async () => {
    const held = [await busySocket('tok-a'), await busySocket('tok-b')];
    const extra = await rawSocket(server.url);
    const done = closed(extra);
    extra.write('GET /nothing HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    assert.equal(await done, '', 'dropped without an answer');
    held[0]?.destroy();
    const again = await waitFor('a socket accepted after one closed', async () => {
      const socket = await rawSocket(server.url);
      const reply = closed(socket);
      socket.write('GET /nothing HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
      const text = await reply;
      return text.includes('404') ? text : undefined;
    });
    assert.match(again, /HTTP\/1\.1 404/);
    held[1]?.destroy();
  });
});
