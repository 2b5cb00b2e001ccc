import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Child } from '../helpers/child.js';
import { startServing } from '../helpers/taskrail.js';
import { makeKey, TestAuthServer, type TestKey } from '../oauth/auth-server.js';
import { rpc } from '../server/support.js';
import { callAsTask, CLI, EVERYTHING_STDIO, textOf, waitForTask } from './support.js';

/** `taskrail proxy --auth oauth:ISSUER`: the serve options apply to the proxy as they are. */
describe('taskrail proxy --auth oauth: (server-everything on stdio)', () => {
  const as = new TestAuthServer();
  let key: TestKey;
  let proxy: Child;
  let url = '';

  before(async () => {
    key = await makeKey('rsa-proxy', 'RS256');
    await as.start(key);
    const args = ['proxy', '--port', '0', '--store', 'memory:', '--log-level', 'warn'];
    args.push('--auth', `oauth:${as.issuer}`, '--scope', 'mcp:tools');
    ({ child: proxy, url } = await startServing([...args, ...EVERYTHING_STDIO], { main: CLI }));
  });
  after(async () => {
    await proxy?.kill('SIGTERM');
    await as.close();
  });

  it('refuses a caller without a token, naming the resource metadata', async () => {
    const reply = await rpc(url, 'tools/call', { name: 'get-sum', arguments: { a: 1, b: 2 } });
    assert.equal(reply.status, 401);
    const metadata = `${new URL(url).origin}/.well-known/oauth-protected-resource/mcp`;
    const probe = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    assert.match(
      probe.headers.get('www-authenticate') ?? '',
      new RegExp(`resource_metadata="${metadata}"`),
    );
  });

  it("runs a token holder's call as a task that another principal cannot read", async () => {
    const alice = await as.token(key, { sub: 'alice', scope: 'mcp:tools' }, url);
    const bob = await as.token(key, { sub: 'bob', scope: 'mcp:tools' }, url);
    const taskId = await callAsTask(url, 'get-sum', { a: 40, b: 2 }, { bearer: alice });
    const done = await waitForTask(url, taskId, ['completed', 'failed'], 30_000, { bearer: alice });
    assert.equal(textOf(done), 'The sum of 40 and 2 is 42.');
    const peek = await rpc(url, 'tasks/get', { taskId }, { bearer: bob });
    assert.equal(peek.body.result, undefined);
    assert.equal(peek.body.error?.code, -32602);
  });
});
