import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { isClientError, MemoryLedger, TaskrailClient } from '../../src/client/index.js';
import { startServer, client2025, type Running } from '../wire-2025/fixture.js';
import { rpc } from '../server/support.js';
import { makeKey, TestAuthServer, type TestKey } from './auth-server.js';
import { rawInitialize } from '../helpers/raw-session.js';

const UNKNOWN = 'AAAAAAAAAAAAAAAAAAAAAAAA';

async function createTask2025(client: Client, gate: string): Promise<string> {
  const created = await client.request(
    {
      method: 'tools/call',
      params: { name: 'wait_gate', arguments: { gate }, task: { ttl: 60_000 } },
    },
    CreateTaskResultSchema,
  );
  return created.task.taskId;
}

const notFound = (error: Error & { code?: number }): boolean => {
  assert.equal(error.code, -32602);
  return true;
};

describe('OAuth principals: tasks stay with their subject', () => {
  const as = new TestAuthServer();
  let key: TestKey;
  let server: Running;
  let alice = '';
  let bob = '';

  before(async () => {
    key = await makeKey('rsa-1', 'RS256');
    await as.start(key);
    server = await startServer({ auth: { oauth: { issuer: as.issuer } } });
    alice = await as.token(key, { sub: 'alice', client_id: 'host-a' }, server.url);
    bob = await as.token(key, { sub: 'bob', client_id: 'host-a' }, server.url);
  });
  after(async () => {
    await server.close();
    await as.close();
  });

  it("answers another subject's task like an unknown one on every 2026-07-28 method", async () => {
    const created = await rpc(
      server.url,
      'tools/call',
      { name: 'wait_gate', arguments: { gate: 'm1' } },
      { bearer: alice },
    );
    const taskId = created.body.result?.['taskId'] as string;
    assert.equal(typeof taskId, 'string', JSON.stringify(created.body));
    const methods: [string, Record<string, unknown>][] = [
      ['tasks/get', {}],
      ['tasks/update', { inputResponses: { k: { action: 'accept', content: {} } } }],
      ['tasks/cancel', {}],
    ];
    for (const [method, extra] of methods) {
      const foreign = await rpc(server.url, method, { taskId, ...extra }, { bearer: bob, id: 9 });
      const unknown = await rpc(
        server.url,
        method,
        { taskId: UNKNOWN, ...extra },
        { bearer: bob, id: 9 },
      );
      assert.deepEqual(foreign, unknown, method);
      assert.equal(foreign.body.error?.code, -32602, method);
    }
    const mine = await rpc(server.url, 'tasks/get', { taskId }, { bearer: alice });
    assert.equal(mine.body.result?.['status'], 'working', 'bob cancelled nothing');
    server.gates.open('m1');
  });

  it("keeps another subject's tasks out of list, get, result and cancel on the 2025-11-25 wire", async () => {
    const a = await client2025(server.url, { bearer: alice });
    const b = await client2025(server.url, { bearer: bob });
    try {
      const taskId = await createTask2025(a, 'wire2025');
      assert.ok((await a.experimental.tasks.listTasks()).tasks.some((t) => t.taskId === taskId));
      assert.ok(!(await b.experimental.tasks.listTasks()).tasks.some((t) => t.taskId === taskId));
      await assert.rejects(b.experimental.tasks.getTask(taskId), notFound);
      await assert.rejects(
        b.experimental.tasks.getTaskResult(taskId, CallToolResultSchema),
        notFound,
      );
      await assert.rejects(b.experimental.tasks.cancelTask(taskId), notFound);
      server.gates.open('wire2025');
      const result = await a.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      assert.equal((result.content[0] as { text: string }).text, 'gate wire2025 opened');
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('refuses a 2025-11-25 session without a valid token, with the same challenge', async () => {
    await assert.rejects(client2025(server.url));
    const res = await rawInitialize(server.url, { token: 'x.y.z' });
    assert.equal(res.status, 401);
    assert.match(
      res.headers.get('www-authenticate') ?? '',
      /resource_metadata="[^"]+", error="invalid_token"/,
    );
  });

  it('TaskrailClient: a good bearer works; a missing one names the resource metadata', async () => {
    const home = mkdtempSync(join(tmpdir(), 'taskrail-oauth-client-'));
    const refused = new TaskrailClient({ url: server.url, home, ledger: new MemoryLedger() });
    const accepted = new TaskrailClient({
      url: server.url,
      home,
      bearer: alice,
      ledger: new MemoryLedger(),
    });
    try {
      const expected = `${new URL(server.url).origin}/.well-known/oauth-protected-resource/mcp`;
      await assert.rejects(refused.callTool('greet', { name: 'x' }), (error: unknown) => {
        assert.ok(isClientError(error, 'UNAUTHORIZED'), String(error));
        assert.equal(error.resourceMetadata, expected);
        assert.ok(error.message.includes(expected), error.message);
        return true;
      });
      const call = await accepted.callTool('greet', { name: 'Ada' });
      const outcome = await call.result();
      assert.equal(outcome.kind, 'completed', JSON.stringify(outcome));
    } finally {
      refused.close();
      accepted.close();
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe('OAuth scope', () => {
  const as = new TestAuthServer();
  let key: TestKey;
  let server: Running;

  before(async () => {
    key = await makeKey('ec-1', 'ES256');
    await as.start(key);
    server = await startServer({ auth: { oauth: { issuer: as.issuer, scope: 'mcp:tools' } } });
  });
  after(async () => {
    await server.close();
    await as.close();
  });

  it('403 insufficient_scope without the scope, on both wires; served with it', async () => {
    const without = await as.token(key, { scope: 'profile' }, server.url);
    const wire2026 = await rpc(
      server.url,
      'tools/call',
      { name: 'greet', arguments: { name: 'x' } },
      { bearer: without },
    );
    assert.equal(wire2026.status, 403);
    await assert.rejects(client2025(server.url, { bearer: without }));
    const res = await fetch(server.url, {
      method: 'POST',
      headers: { authorization: `Bearer ${without}` },
      body: '{}',
    });
    assert.equal(res.status, 403);
    const header = res.headers.get('www-authenticate') ?? '';
    assert.match(header, /error="insufficient_scope"/);
    assert.match(header, /scope="mcp:tools"/);
    const meta = (await (
      await fetch(new URL('/.well-known/oauth-protected-resource/mcp', server.url))
    ).json()) as Record<string, unknown>;
    assert.deepEqual(meta['scopes_supported'], ['mcp:tools']);
    const withScope = await as.token(key, { scope: 'profile mcp:tools' }, server.url);
    const ok = await rpc(
      server.url,
      'tools/call',
      { name: 'greet', arguments: { name: 'x' } },
      { bearer: withScope, caps: {} },
    );
    assert.equal(ok.status, 200);
    const client = await client2025(server.url, { bearer: withScope });
    await client.close();
  });
});
