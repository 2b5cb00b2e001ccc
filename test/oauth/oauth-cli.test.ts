import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runNode, type Child } from '../helpers/child.js';
import { startServing } from '../helpers/taskrail.js';
import { makeKey, TestAuthServer, type TestKey } from './auth-server.js';

const CLI = 'dist/cli/main.js';
const SERVE = ['serve', '--port', '0', '--store', 'memory:'];

async function runCli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const { code, stdout, stderr } = await runNode(CLI, args, { TASKRAIL_BEARER: '', ...env });
  return { code: code ?? 1, stdout, stderr };
}

describe('taskrail serve --auth oauth: and taskrail call with TASKRAIL_BEARER', () => {
  const as = new TestAuthServer();
  let key: TestKey;
  let serve: Child;
  let url = '';

  before(async () => {
    key = await makeKey('rsa-1', 'RS256');
    await as.start(key);
    const args = [...SERVE, '--auth', `oauth:${as.issuer}`, '--scope', 'mcp:tools'];
    ({ child: serve, url } = await startServing([...args, '--log-level', 'warn'], {
      main: CLI,
      timeoutMs: 15_000,
    }));
  });
  after(async () => {
    await serve.kill('SIGTERM');
    await as.close();
  });

  it('refuses to start when the issuer has no metadata, saying where it looked', async () => {
    const run = await runCli([...SERVE, '--auth', 'oauth:http://127.0.0.1:9/none']);
    assert.notEqual(run.code, 0);
    assert.match(
      run.stderr,
      /cannot read the authorization server metadata of http:\/\/127\.0\.0\.1:9\/none/,
    );
    const flags = await runCli(['serve', '--port', '0', '--scope', 'x']);
    assert.match(flags.stderr, /--resource and --scope need --auth oauth:ISSUER_URL/);
  });

  it('calls with the bearer from the environment; without one, names the resource metadata', async () => {
    const args = ['call', url, 'greet', '--args', '{"name":"Ada"}', '--no-tasks'];
    const refused = await runCli(args);
    assert.notEqual(refused.code, 0);
    assert.ok(
      refused.stderr.includes(`${new URL(url).origin}/.well-known/oauth-protected-resource/mcp`),
      refused.stderr,
    );
    const token = await as.token(key, { scope: 'mcp:tools' }, url);
    const accepted = await runCli(args, { TASKRAIL_BEARER: token });
    assert.equal(accepted.code, 0, accepted.stderr);
    assert.match(accepted.stdout, /Hello, Ada/);
  });
});
