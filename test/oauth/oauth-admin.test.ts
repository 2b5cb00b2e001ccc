import assert from 'node:assert/strict';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import * as z from 'zod/v4';
import type { AuthInfo } from '@modelcontextprotocol/server';
import { createTaskServer, type TaskServer } from '../../src/server/index.js';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';
import { rpc } from '../server/support.js';
import { makeKey, TestAuthServer, type TestKey } from './auth-server.js';

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** A POST with exactly these headers (fetch may not set Host). */
function statusOf(url: string, headers: Record<string, string>, body?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: body === undefined ? 'GET' : 'POST', headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end(body);
  });
}

function holdTool(app: TaskServer): void {
  app.tool(
    'hold',
    { description: 'Runs until cancelled', inputSchema: z.object({}), task: true },
    async (_args, ctx) => {
      await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
      return { content: [{ type: 'text', text: 'stopped' }] };
    },
  );
}

describe('--admin oauth: read and write scopes', () => {
  const as = new TestAuthServer();
  let key: TestKey;
  let app: TaskServer;
  let url = '';
  let base = '';

  before(async () => {
    key = await makeKey('rsa-1', 'RS256');
    await as.start(key);
    app = createTaskServer({
      store: new MemoryTaskStore(),
      logger: silent,
      auth: { oauth: { issuer: as.issuer } },
      admin: { oauth: { issuer: as.issuer } },
    });
    holdTool(app);
    url = (await app.listen(0, '127.0.0.1')).url;
    base = new URL(url).origin;
  });
  after(async () => {
    await app.close(1000);
    await as.close();
  });

  const admin = async (path: string, scope?: string, method = 'GET') => {
    const headers: Record<string, string> = {};
    if (scope !== undefined) {
      headers['authorization'] = `Bearer ${await as.token(key, { sub: 'ops', scope }, url)}`;
    }
    const res = await fetch(`${base}${path}`, {
      method,
      headers,
      ...(method === 'POST' ? { body: '{}' } : {}),
    });
    const text = await res.text();
    return { status: res.status, header: res.headers.get('www-authenticate') ?? '', text };
  };

  it('401 without a token, 403 without an admin scope, 200 with the read scope', async () => {
    const none = await admin('/metrics');
    assert.equal(none.status, 401);
    assert.match(
      none.header,
      /realm="taskrail-admin", resource_metadata="[^"]+", scope="taskrail:admin"/,
    );
    const caller = await admin('/metrics', 'mcp:tools');
    assert.equal(caller.status, 403);
    assert.match(caller.header, /error="insufficient_scope"/);
    const reader = await admin('/metrics', 'taskrail:admin');
    assert.equal(reader.status, 200);
    assert.match(reader.text, /# HELP/);
    const me = JSON.parse((await admin('/dashboard/api/me', 'taskrail:admin')).text) as Record<
      string,
      unknown
    >;
    assert.deepEqual(me, { name: 'ops (test-client)', canAnswer: false, canCancel: false });
  });

  it('only the write scope may cancel', async () => {
    const bearer = await as.token(key, { sub: 'alice' }, url);
    const created = await rpc(url, 'tools/call', { name: 'hold', arguments: {} }, { bearer });
    const taskId = created.body.result?.['taskId'] as string;
    const path = `/dashboard/api/tasks/${taskId}/cancel`;
    assert.equal((await admin(path, 'taskrail:admin', 'POST')).status, 403);
    const got = await rpc(url, 'tasks/get', { taskId }, { bearer });
    assert.equal(got.body.result?.['status'], 'working');
    assert.equal((await admin(path, 'taskrail:admin:write', 'POST')).status, 200);
    const after = await rpc(url, 'tasks/get', { taskId }, { bearer });
    assert.equal(after.body.result?.['status'], 'cancelled');
  });

  it('checks Host on the admin and metadata routes too', async () => {
    for (const path of ['/metrics', '/dashboard', '/.well-known/oauth-protected-resource']) {
      const res = await statusOf(`${base}${path}`, { host: 'evil.example' });
      assert.equal(res, 403, path);
    }
  });
});

describe('the Node handler mounted in another server', () => {
  let app: TaskServer;
  let server: Server;
  let url = '';
  let runs = 0;

  before(async () => {
    app = createTaskServer({ store: new MemoryTaskStore(), logger: silent });
    holdTool(app);
    app.tool(
      'whoami',
      { description: 'Names the caller', inputSchema: z.object({}) },
      (_a, ctx) => {
        runs += 1;
        return { content: [{ type: 'text', text: ctx.principal }] };
      },
    );
    // The host application's own auth middleware sets req.auth, as the SDK's requireBearerAuth does.
    server = createServer((req, res) => {
      const who = /^Bearer (\w+)$/.exec(req.headers.authorization ?? '')?.[1];
      const auth: AuthInfo | undefined =
        who === undefined
          ? undefined
          : { token: who, clientId: 'app', scopes: [], extra: { sub: who } };
      if (auth !== undefined) (req as IncomingMessage & { auth?: AuthInfo }).auth = auth;
      app.nodeHandler(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  });
  after(async () => {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    await app.close(1000);
  });

  it("takes the principal from the host application's req.auth on the fast and SDK paths", async () => {
    const sync = await rpc(
      url,
      'tools/call',
      { name: 'whoami', arguments: {} },
      { bearer: 'dave' },
    );
    assert.equal((sync.body.result?.['content'] as { text: string }[])[0]?.text, 'dave');
    assert.equal(runs, 1);
    const created = await rpc(
      url,
      'tools/call',
      { name: 'hold', arguments: {} },
      { bearer: 'dave' },
    );
    const taskId = created.body.result?.['taskId'] as string;
    const mine = await rpc(url, 'tasks/get', { taskId }, { bearer: 'dave' });
    assert.equal(mine.body.result?.['status'], 'working');
    const theirs = await rpc(url, 'tasks/get', { taskId }, { bearer: 'erin' });
    assert.equal(theirs.body.error?.code, -32602);
    const anonymous = await rpc(url, 'tasks/get', { taskId });
    assert.equal(anonymous.body.error?.code, -32602);
    await rpc(url, 'tasks/cancel', { taskId }, { bearer: 'dave' });
  });

  it('refuses a foreign Host on a loopback socket (DNS rebinding), without listen()', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const json = { 'content-type': 'application/json', authorization: 'Bearer dave' };
    assert.equal(await statusOf(url, { ...json, host: 'attacker.example' }, body), 403);
    assert.equal(await statusOf(url, { ...json, host: 'attacker.example:80' }, body), 403);
    const origin = await rpc(
      url,
      'tools/call',
      { name: 'whoami', arguments: {} },
      { bearer: 'dave', headers: { origin: 'http://attacker.example' } },
    );
    assert.equal(origin.status, 403);
    assert.equal(runs, 1, 'refused requests ran nothing');
  });
});
