/**
 * Pings keep a 2025-11-25 session's client in touch, not the session in use (issue 36): at the
 * session cap, sessions that only ping are idle and the least recently used of them makes room
 * for a newcomer, while a session that does work is kept. Real HTTP on 127.0.0.1.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTaskServer, type TaskServer } from '../../src/server/index.js';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';

const EVICT_AFTER_MS = 300;
const HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

async function initialize(url: string): Promise<{ status: number; session: string | null }> {
  const params = {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'pinger', version: '1.0.0' },
  };
  const res = await fetch(url, {
    method: 'POST',
    headers: HEADERS,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params }),
  });
  await res.text();
  return { status: res.status, session: res.headers.get('mcp-session-id') };
}

/** One request on a session: its HTTP status (404 once the session is gone). */
async function send(url: string, session: string, method: string): Promise<number> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { ...HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method }),
  });
  await res.text();
  return res.status;
}

describe('2025-11-25 sessions kept alive only by pings', () => {
  let app: TaskServer;
  let url = '';
  before(async () => {
    app = createTaskServer({
      store: new MemoryTaskStore(),
      wire2025Sessions: { maxSessions: 3, evictAfterIdleMs: EVICT_AFTER_MS },
    });
    ({ url } = await app.listen(0, '127.0.0.1'));
  });
  after(() => app.close(100));

  it('at the cap, a session that only pings makes room; one that works is kept', async () => {
    const opened = await Promise.all([initialize(url), initialize(url), initialize(url)]);
    const [pinger1, pinger2, worker] = opened.map(({ session }) => session as string) as [
      string,
      string,
      string,
    ];
    // Each session is heard from far more often than the eviction age, for twice that age.
    const start = Date.now();
    while (Date.now() - start < 2 * EVICT_AFTER_MS) {
      assert.equal(await send(url, pinger1, 'ping'), 200);
      assert.equal(await send(url, pinger2, 'ping'), 200);
      assert.equal(await send(url, worker, 'tools/list'), 200);
    }
    const newcomer = await initialize(url);
    assert.equal(newcomer.status, 200, 'the newcomer got a session at the cap');
    assert.ok(newcomer.session);
    assert.equal(await send(url, worker, 'tools/list'), 200, 'the working session was kept');
    const pingers = [await send(url, pinger1, 'ping'), await send(url, pinger2, 'ping')];
    assert.deepEqual(pingers.sort(), [200, 404], 'one ping-only session made room');
  });
});
