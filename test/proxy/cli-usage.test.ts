import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseHeader } from '../../src/proxy/index.js';
import { startNode } from '../helpers/child.js';
import { CLI } from './support.js';

async function run(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = startNode(CLI, ['proxy', '--port', '0', '--store', 'memory:', ...args]);
  const code = await new Promise<number | null>((resolve) =>
    child.process.once('exit', (exit) => resolve(exit)),
  );
  return { code, stderr: child.stderr() };
}

describe('taskrail proxy usage errors', () => {
  it('needs an upstream, and says how to give one', async () => {
    const { code, stderr } = await run([]);
    assert.equal(code, 4);
    assert.match(stderr, /no upstream: add --upstream http:\/\/HOST:PORT\/mcp, or -- COMMAND/);
  });

  it('refuses both kinds of upstream at once', async () => {
    const { code, stderr } = await run(['--upstream', 'http://127.0.0.1:9/mcp', '--', 'x']);
    assert.equal(code, 4);
    assert.match(stderr, /either --upstream URL or -- COMMAND, not both/);
  });

  it('refuses a header that is not "Name: value"', async () => {
    const { code, stderr } = await run([
      '--upstream',
      'http://127.0.0.1:9/mcp',
      '--upstream-header',
      'Authorization Bearer x',
    ]);
    assert.equal(code, 4);
    assert.match(stderr, /is not 'Name: value'/);
  });

  it('says which upstream it cannot reach', async () => {
    const { code, stderr } = await run(['--', process.execPath, '-e', 'process.exit(3)']);
    assert.equal(code, 4);
    assert.match(stderr, /cannot connect to the upstream .*process\.exit\(3\)/);
  });

  it('refuses a --timeout or --retry that is not a time or a count, saying what is', async () => {
    const timeout = await run(['--timeout', '0', '--', 'x']);
    assert.equal(timeout.code, 4);
    assert.match(
      timeout.stderr,
      /--timeout .* must be a time from 1 ms to 7 days: 30000, 30s, 2m or 1h/,
    );
    const retry = await run(['--retry', 'two', '--', 'x']);
    assert.equal(retry.code, 4);
    assert.match(retry.stderr, /--retry .* must be a whole number from 0 to 1000/);
  });

  it('refuses a worker given both --tools and an upstream', async () => {
    const child = startNode(CLI, [
      'worker',
      '--store',
      'redis://127.0.0.1:1/0',
      '--tools',
      'demo',
      '--upstream',
      'http://127.0.0.1:9/mcp',
    ]);
    const code = await new Promise<number | null>((resolve) =>
      child.process.once('exit', (exit) => resolve(exit)),
    );
    assert.equal(code, 4);
    assert.match(child.stderr(), /either --tools or an upstream/);
  });

  it('parses headers, trimming around the colon', () => {
    assert.deepEqual(parseHeader('X-Api-Key:  abc:def '), ['X-Api-Key', 'abc:def']);
    assert.throws(() => parseHeader(': value'), /Name: value/);
  });
});
