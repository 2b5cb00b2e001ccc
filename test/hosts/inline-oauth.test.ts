import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startServer, type Running } from '../wire-2025/fixture.js';
import { makeKey, TestAuthServer, type TestKey } from '../oauth/auth-server.js';
import { rpc, type RawReply } from '../server/support.js';

type Result = {
  content?: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};

const NO_TASKS: Record<string, unknown> = {};

function resultOf(reply: RawReply): Result {
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  assert.ok(reply.body.result, `no result: ${JSON.stringify(reply.body)}`);
  return reply.body.result as Result;
}

const textOf = (result: Result): string =>
  (result.content ?? []).map((block) => block.text ?? '').join('\n');

/**
 * Inline wait and fallback handles under `--auth oauth:`: the durable task behind an inline
 * call belongs to the token's subject, and its handle is worthless to anyone else.
 */
describe('hosts without tasks under OAuth: the handle stays with its subject', () => {
  const as = new TestAuthServer();
  let key: TestKey;
  let server: Running;
  let alice = '';
  let bob = '';

  before(async () => {
    key = await makeKey('rsa-inline', 'RS256');
    await as.start(key);
    server = await startServer({
      auth: { oauth: { issuer: as.issuer } },
      fallbackTools: true,
      inlineWaitMs: 300,
    });
    alice = await as.token(key, { sub: 'alice', client_id: 'host-a' }, server.url);
    bob = await as.token(key, { sub: 'bob', client_id: 'host-b' }, server.url);
  });
  after(async () => {
    await server.close();
    await as.close();
  });

  it('a call without a token is refused before any task exists', async () => {
    const reply = await rpc(
      server.url,
      'tools/call',
      { name: 'wait_gate', arguments: { gate: 'anon' } },
      { caps: NO_TASKS },
    );
    assert.equal(reply.status, 401);
  });

  it('carries the subject to the durable task; another subject cannot follow the handle', async () => {
    const call = (name: string, args: object, bearer: string, caps = NO_TASKS) =>
      rpc(server.url, 'tools/call', { name, arguments: args }, { bearer, caps });
    const handle = resultOf(await call('wait_gate', { gate: 'oauth' }, alice));
    assert.equal(handle.structuredContent?.['next'], 'task_result', JSON.stringify(handle));
    const taskId = String(handle.structuredContent?.['taskId']);

    const owned = await rpc(server.url, 'tasks/get', { taskId }, { bearer: alice });
    assert.equal(owned.body.result?.['status'], 'working', JSON.stringify(owned.body));
    const foreign = await rpc(server.url, 'tasks/get', { taskId }, { bearer: bob });
    assert.equal(foreign.body.error?.code, -32602, JSON.stringify(foreign.body));
    for (const tool of ['task_status', 'task_result', 'task_cancel']) {
      const result = resultOf(await call(tool, { taskId }, bob));
      assert.equal(result.isError, true, `${tool}: ${JSON.stringify(result)}`);
      assert.match(textOf(result), /There is no task .* not yours/);
    }

    const still = resultOf(await call('task_result', { taskId }, alice));
    assert.equal(still.structuredContent?.['status'], 'working', 'bob did not cancel it');
    server.gates.open('oauth');
    const done = resultOf(await call('task_result', { taskId }, alice));
    assert.equal(textOf(done), 'gate oauth opened');
  });

  it("answers to a question over the request resume only the asker's task", async () => {
    const call = (bearer: string, inputResponses?: Record<string, unknown>) =>
      rpc(
        server.url,
        'tools/call',
        { name: 'confirm', arguments: {}, ...(inputResponses ? { inputResponses } : {}) },
        { bearer, caps: { elicitation: {} } },
      );
    const asked = resultOf(await call(alice)) as Result & { inputRequests?: object };
    const [key] = Object.keys(asked.inputRequests ?? {});
    assert.ok(key, JSON.stringify(asked));
    const answer = { [key]: { action: 'accept', content: { ok: true } } };
    const stolen = resultOf(await call(bob, answer));
    assert.equal(stolen.isError, true, JSON.stringify(stolen));
    assert.match(textOf(stolen), /There is no task/);
    assert.equal(textOf(resultOf(await call(alice, answer))), 'confirmed');
  });
});
