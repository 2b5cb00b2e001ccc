import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runNode, type Child } from '../helpers/child.js';
import { startServing } from '../helpers/taskrail.js';
import { openListen, rpc, type RawListen } from '../listen/support.js';

const MAIN = resolve('dist/cli/main.js');

/** `taskrail serve --max-streams` and `--max-waiting-results`: the flags reach the bounds. */
describe('taskrail serve: fair bound flags', () => {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-fair-serve-'));
  const streams: RawListen[] = [];
  let child: Child;
  let url = '';
  before(async () => {
    const tokens = join(dir, 'tokens.json');
    writeFileSync(tokens, JSON.stringify({ 'tok-a': 'alice', 'tok-b': 'bob' }));
    const args = ['serve', '--port', '0', '--store', 'memory:', '--log-level', 'error'];
    args.push('--auth', `tokens:${tokens}`, '--max-streams', '4', '--max-waiting-results', '10');
    ({ child, url } = await startServing(args, { main: MAIN, timeoutMs: 15_000 }));
  });
  after(async () => {
    for (const stream of streams) stream.close();
    await child?.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  async function longTask(bearer: string): Promise<string> {
    const params = { name: 'slow_compute', arguments: { seconds: 600 } };
    const { body } = await rpc(url, 'tools/call', params, { bearer, name: 'slow_compute' });
    const result = body['result'] as Record<string, unknown> | undefined;
    if (result?.['resultType'] !== 'task') throw new Error(JSON.stringify(body));
    return String(result['taskId']);
  }

  it('holds one caller to half of --max-streams and serves another', async () => {
    const alices = await longTask('tok-a');
    const alice: RawListen[] = [];
    for (let i = 0; i < 3; i++) alice.push(await openListen(url, [alices], { bearer: 'tok-a' }));
    streams.push(...alice);
    assert.deepEqual(
      alice.map((s) => s.status),
      [200, 200, 429],
    );
    const error = alice[2]?.error?.['error'] as { code: number; data: Record<string, unknown> };
    assert.equal(error.code, -32000);
    assert.deepEqual(error.data, {
      bound: 'task streams',
      capacity: 4,
      share: 2,
      reason: 'share',
      retryAfterMs: 1000,
    });
    const bob = await openListen(url, [await longTask('tok-b')], { bearer: 'tok-b' });
    streams.push(bob);
    assert.equal(bob.status, 200);
  });

  it('refuses a bound of 0 with an error that says what to give', async () => {
    const { code, stderr } = await runNode(MAIN, ['serve', '--max-streams', '0', '--port', '0']);
    assert.notEqual(code, 0);
    assert.match(stderr, /--max-streams.*must be a whole number of at least 1/);
  });
});
