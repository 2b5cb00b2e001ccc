import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateTaskResultSchema, CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { createTaskServer, type TaskServer } from '../../src/server/index.js';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';
import { envelope, openListen, startHold, type RawListen } from '../listen/support.js';
import { waitFor } from '../helpers/wait.js';
import { client2025, startServer, type Running } from '../wire-2025/fixture.js';
import { rawInitialize, rawSessionStatus } from '../helpers/raw-session.js';

const TOKENS = { 'tok-a': 'alice', 'tok-b': 'bob', 'tok-c': 'carol' };
const silent = { info() {}, warn() {}, error() {} };

async function startTask(client: Client, gate: string): Promise<string> {
  const created = await client.request(
    {
      method: 'tools/call',
      params: { name: 'wait_gate', arguments: { gate }, task: { ttl: 60_000 } },
    },
    CreateTaskResultSchema,
  );
  return created.task.taskId;
}

function waitResult(client: Client, taskId: string) {
  return client.request({ method: 'tasks/result', params: { taskId } }, CallToolResultSchema, {
    timeout: 60_000,
  });
}

describe('waiting tasks/result requests on the 2025-11-25 wire, shared fairly', () => {
  let server: Running;
  let alice: Client;
  let bob: Client;
  before(async () => {
    server = await startServer({
      auth: { tokens: TOKENS },
      wire2025Sessions: { maxWaitingResults: 8 },
    });
    alice = await client2025(server.url, { bearer: 'tok-a' });
    bob = await client2025(server.url, { bearer: 'tok-b' });
  });
  after(async () => {
    await alice.close();
    await bob.close();
    await server.close();
  });

  it('refuses the excess of a greedy caller with -32000, serves another, and leaks nothing', async () => {
    const ids = await Promise.all(Array.from({ length: 10 }, (_, i) => startTask(alice, `a${i}`)));
    const waits = tally(ids.map((id) => waitResult(alice, id)));
    // Four waits hold alice's half of the eight; the other six are answered at once.
    await waitFor('six of alice’s ten waits refused', () => waits.refused.length === 6);
    for (const error of waits.refused)
      assert.match(error.message, /Too many waiting tasks\/result/);
    server.gates.open('b0');
    const bobs = await waitResult(bob, await startTask(bob, 'b0'));
    assert.equal((bobs.content[0] as { text: string }).text, 'gate b0 opened');
    for (let i = 0; i < 10; i++) server.gates.open(`a${i}`);
    await waitFor('alice’s four waits answered', () => waits.answered === 4);
    assert.equal(waits.refused.length, 6);
    console.log(`# tasks/result: alice ${waits.refused.length} of 10 refused; bob's answered`);
  });

  it('gives a finished wait back: the same caller holds its four again', async () => {
    const ids = await Promise.all(Array.from({ length: 5 }, (_, i) => startTask(alice, `c${i}`)));
    const waits = tally(ids.map((id) => waitResult(alice, id)));
    await waitFor('one of five refused', () => waits.refused.length === 1);
    for (let i = 0; i < 5; i++) server.gates.open(`c${i}`);
    await waitFor('the other four answered', () => waits.answered === 4);
    assert.equal(waits.refused.length, 1, 'the first round gave every place back');
  });
});

/** Counts answered and refused requests as they settle. */
function tally(requests: Promise<unknown>[]): { answered: number; refused: Error[] } {
  const counts = { answered: 0, refused: [] as Error[] };
  for (const request of requests) {
    request.then(
      () => (counts.answered += 1),
      (error: Error) => counts.refused.push(error),
    );
  }
  return counts;
}

/** A 2025-11-25 `initialize` by raw HTTP: the status, session id and JSON-RPC error. */
async function initialize(url: string, token?: string) {
  const { status, session, error, headers } = await rawInitialize(
    url,
    token === undefined ? {} : { token },
  );
  return { status, retryAfter: headers.get('retry-after'), session, error };
}

async function ping(url: string, token: string, session: string): Promise<number> {
  return rawSessionStatus(url, { token, session });
}

async function openSessions(url: string, n: number, token?: string) {
  const results = [];
  for (let i = 0; i < n; i++) results.push(await initialize(url, token));
  return {
    opened: results.filter((r) => r.session !== null).map((r) => r.session as string),
    refused: results.filter((r) => r.session === null),
  };
}

async function appWith(options: Parameters<typeof createTaskServer>[0]) {
  const app = createTaskServer({ logger: silent, ...options });
  app.tool('noop', { description: 'x', task: true }, async () => ({ content: [] }));
  const { url } = await app.listen(0);
  return { app, url };
}

describe('2025-11-25 sessions, shared fairly', () => {
  const servers: TaskServer[] = [];
  const start = async (options: Partial<Parameters<typeof createTaskServer>[0]>) => {
    const started = await appWith({ store: new MemoryTaskStore(), ...options });
    servers.push(started.app);
    return started.url;
  };
  after(async () => Promise.all(servers.map((app) => app.close(500))));

  it('holds a caller to half of the cap while another holds sessions', async () => {
    const url = await start({
      auth: { tokens: TOKENS },
      wire2025Sessions: { maxSessions: 10, maxSessionsPerPrincipal: 100 },
    });
    assert.equal((await openSessions(url, 1, 'tok-b')).opened.length, 1);
    const alice = await openSessions(url, 12, 'tok-a');
    assert.equal(alice.opened.length, 5, 'alice gets half of the ten');
    assert.equal(alice.refused.length, 7);
    assert.equal(alice.refused[0]?.status, 429);
    assert.equal(alice.refused[0]?.retryAfter, '60');
    assert.equal(alice.refused[0]?.error?.code, -32000);
    assert.ok((await initialize(url, 'tok-c')).session, 'carol still gets one');
    console.log(
      `# sessions: alice ${alice.opened.length} of 12 opened, ${alice.refused.length} refused (429)`,
    );
  });

  it('makes room for a new caller from a cap full of one caller’s idle sessions', async () => {
    const url = await start({
      auth: { tokens: TOKENS },
      wire2025Sessions: { maxSessions: 6, maxSessionsPerPrincipal: 100, evictAfterIdleMs: 60_000 },
    });
    const alice = await openSessions(url, 6, 'tok-a');
    assert.equal(alice.opened.length, 6, 'alone, alice may borrow the whole cap');
    const bob = await initialize(url, 'tok-b');
    assert.ok(bob.session, JSON.stringify(bob));
    assert.equal(await ping(url, 'tok-a', alice.opened[0] as string), 404, 'her oldest was closed');
    assert.equal(await ping(url, 'tok-a', alice.opened[5] as string), 200);
    assert.equal((await initialize(url, 'tok-a')).status, 429, 'alice is past her half now');
  });

  it('splits the anonymous caller of a server without auth per session', async () => {
    const url = await start({ wire2025Sessions: { maxSessions: 20, maxSessionsPerPrincipal: 5 } });
    // Before: every anonymous session shared one caller's cap of 5; a script took all five.
    const script = await openSessions(url, 8);
    assert.equal(script.opened.length, 8);
    const other = await initialize(url);
    assert.ok(other.session, 'another anonymous caller still gets a session');
  });
});

describe('task streams and connections, shared fairly', () => {
  let app: TaskServer;
  let url: string;
  const streams: RawListen[] = [];
  before(async () => {
    ({ app, url } = await appWith({
      store: new MemoryTaskStore(),
      auth: { tokens: TOKENS },
      listen: { maxSubscriptions: 6 },
      http: { maxConnections: 40 },
    }));
    app.tool('hold', { description: 'held', task: { mode: 'required' } }, (_a, ctx) => {
      return new Promise((_resolve, reject) =>
        ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason as Error)),
      );
    });
    app.runtime.start();
  });
  after(async () => {
    for (const stream of streams) stream.close();
    await app.close(500);
  });

  it('holds one caller to half of the task streams, then serves another', async () => {
    const taskId = await startHold(url, 'x', 'tok-a');
    const alice: RawListen[] = [];
    for (let i = 0; i < 5; i++) alice.push(await openListen(url, [taskId], { bearer: 'tok-a' }));
    streams.push(...alice);
    const open = alice.filter((s) => s.status === 200);
    const refused = alice.filter((s) => s.status !== 200);
    assert.equal(open.length, 3);
    assert.deepEqual(
      refused.map((s) => s.status),
      [429, 429],
    );
    assert.match(JSON.stringify(refused[0]?.error), /task streams/);
    const bobsTask = await startHold(url, 'y', 'tok-b');
    const bob = await openListen(url, [bobsTask], { bearer: 'tok-b' });
    streams.push(bob);
    assert.equal(bob.status, 200);
    open[0]?.close();
    await open[0]?.ended;
    const again = await waitForStatus(
      () => openListen(url, [taskId], { bearer: 'tok-a' }),
      streams,
    );
    assert.equal(again, 200, 'a closed stream gave its place back');
    console.log(
      `# streams: alice ${open.length} of 5 open, ${refused.length} refused (429); bob served`,
    );
  });
});

/** Retries `open` until it answers 200 (the server notices a closed stream asynchronously). */
async function waitForStatus(open: () => Promise<RawListen>, keep: RawListen[]): Promise<number> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const stream = await open();
    keep.push(stream);
    if (stream.status === 200 || Date.now() > deadline) return stream.status;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** A listen request by plain fetch, its answer read to the end (for the headers). */
async function rawListen(url: string, taskId: string, token: string): Promise<Response> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'subscriptions/listen',
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 'raw',
      method: 'subscriptions/listen',
      params: { notifications: { taskIds: [taskId] }, _meta: envelope() },
    }),
  });
  await res.text();
  return res;
}

describe('busy connections of listen(), shared fairly', () => {
  let app: TaskServer;
  let anon: TaskServer;
  let url: string;
  let anonUrl: string;
  const streams: RawListen[] = [];
  before(async () => {
    // Twelve sockets: room for idle keep-alive ones beside the streams (they count at accept).
    // Every caller here is 127.0.0.1: the per-address cap (half, by default) is lifted.
    const http = { maxConnections: 12, maxConnectionsPerAddress: 12 };
    const options = { listen: { maxSubscriptions: 100 }, http };
    ({ app, url } = await appWith({
      store: new MemoryTaskStore(),
      auth: { tokens: TOKENS },
      ...options,
    }));
    ({ app: anon, url: anonUrl } = await appWith({ store: new MemoryTaskStore(), ...options }));
    for (const server of [app, anon]) {
      server.tool('hold', { description: 'held', task: { mode: 'required' } }, (_a, ctx) => {
        return new Promise((_resolve, reject) =>
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason as Error)),
        );
      });
      server.runtime.start();
    }
  });
  after(async () => {
    for (const stream of streams) stream.close();
    await app.close(500);
    await anon.close(500);
  });

  it('refuses a caller past half of the connections with 429 and Retry-After, not a reset', async () => {
    const taskId = await startHold(url, 'x', 'tok-a');
    const alice: RawListen[] = [];
    for (let i = 0; i < 8; i++) alice.push(await openListen(url, [taskId], { bearer: 'tok-a' }));
    streams.push(...alice);
    const open = alice.filter((s) => s.status === 200).length;
    const refused = alice.filter((s) => s.status === 429);
    assert.equal(open, 6, 'half of the twelve connections');
    assert.equal(refused.length, 2);
    assert.match(JSON.stringify(refused[0]?.error), /connections/);
    const raw = await rawListen(url, taskId, 'tok-a');
    assert.equal(raw.status, 429);
    assert.equal(raw.headers.get('retry-after'), '1');
    const bobsTask = await startHold(url, 'y', 'tok-b');
    const bob = await openListen(url, [bobsTask], { bearer: 'tok-b' });
    streams.push(bob);
    assert.equal(bob.status, 200, 'bob is served');
    console.log(
      `# connections: alice ${open} of 8 held, ${refused.length} refused (429); bob served`,
    );
  });

  it('counts each anonymous connection on its own on a server without auth', async () => {
    const taskId = await startHold(anonUrl, 'x');
    const script: RawListen[] = [];
    for (let i = 0; i < 6; i++) script.push(await openListen(anonUrl, [taskId]));
    streams.push(...script);
    assert.equal(script.filter((s) => s.status === 200).length, 6);
    const other = await openListen(anonUrl, [taskId]);
    streams.push(other);
    assert.equal(other.status, 200, 'another anonymous caller is served');
  });
});
