import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { startNode, type Child } from '../helpers/child.js';
import { waitFor } from '../helpers/wait.js';
import { getTask } from '../server/support.js';
import { CLI, callAsTask, startInProcess, textOf, waitForTask } from './support.js';

const CHATTY = fileURLToPath(new URL('./fixtures/chatty-upstream.js', import.meta.url));
const TIMEOUT_MS = 700;

type Failed = { error?: { code: number; message: string } };

/** How often the upstream child logged `line` (a tool's name, or `cancelled`). */
function logged(callLog: string, line: string): number {
  if (!existsSync(callLog)) return 0;
  return readFileSync(callLog, 'utf8')
    .split('\n')
    .filter((entry) => entry === line).length;
}

describe('taskrail proxy --timeout 700 --retry 2 (the CLI, a stdio upstream)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-proxy-policy-'));
  const callLog = join(dir, 'calls.log');
  let proxy: Child;
  let url: string;
  before(async () => {
    proxy = startNode(
      CLI,
      [
        'proxy',
        '--port',
        '0',
        '--store',
        `sqlite:${join(dir, 'tasks.db')}`,
        '--timeout',
        String(TIMEOUT_MS),
        '--retry',
        '2',
        '--log-level',
        'warn',
        '--',
        process.execPath,
        CHATTY,
      ],
      { CALL_LOG: callLog },
    );
    const [, served] = await proxy.line(/taskrail serving (\S+)/, 30_000);
    url = served as string;
  });
  after(async () => {
    await proxy.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  it('calls a failing upstream tool again after each backoff, until it answers', async () => {
    const started = Date.now();
    const taskId = await callAsTask(url, 'flaky', { failures: 2 });
    await waitFor(
      'the wait before attempt 2',
      async () => {
        const message = (await getTask(url, taskId))['statusMessage'];
        return typeof message === 'string' && /^attempt 2 of 3 at /.test(message)
          ? true
          : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 50 },
    );
    const done = await waitForTask(url, taskId, ['completed', 'failed'], 30_000);
    assert.equal(done['status'], 'completed', JSON.stringify(done));
    assert.equal(textOf(done), 'ok after 3');
    assert.equal(logged(callLog, 'flaky'), 3, 'two failed calls and the good one');
    const took = Date.now() - started;
    assert.ok(took >= 1000 + 2000, `backoffs of 1 s and 2 s, all done in ${took} ms`);
  });

  it("ends with the upstream's own error once the retries are used", async () => {
    const before = logged(callLog, 'flaky');
    const taskId = await callAsTask(url, 'flaky', { failures: 1000 });
    const done = await waitForTask(url, taskId, ['completed', 'failed'], 30_000);
    assert.equal(done['status'], 'failed');
    assert.equal((done as Failed).error?.code, -32603);
    assert.match((done as Failed).error?.message ?? '', /flaky: try again$/);
    assert.equal(logged(callLog, 'flaky') - before, 3, 'the first call and two more');
  });

  it('times out each attempt, cancels it upstream, and fails once the retries are used', async () => {
    const started = Date.now();
    const taskId = await callAsTask(url, 'hang', {});
    const done = await waitForTask(url, taskId, ['completed', 'failed'], 30_000);
    const took = Date.now() - started;
    assert.equal(done['status'], 'failed', JSON.stringify(done));
    assert.match(
      (done as Failed).error?.message ?? '',
      new RegExp(`timed out after ${TIMEOUT_MS} ms`),
    );
    assert.equal(logged(callLog, 'hang'), 3, 'three attempts');
    await waitFor('each attempt cancelled upstream', () =>
      logged(callLog, 'cancelled') === 3 ? true : undefined,
    );
    // Three limits and two backoffs, not an hour of --upstream-timeout.
    assert.ok(took >= 3 * TIMEOUT_MS + 1000 + 2000, `failed after ${took} ms`);
    assert.ok(took < 20_000, `failed after ${took} ms`);
  });

  it('does not call again when the upstream says the request is wrong', async () => {
    const taskId = await callAsTask(url, 'bad_args', {});
    const done = await waitForTask(url, taskId, ['completed', 'failed'], 30_000);
    assert.equal(done['status'], 'failed');
    assert.equal((done as Failed).error?.code, -32602);
    assert.match((done as Failed).error?.message ?? '', /refused: bad_args$/);
    assert.equal(logged(callLog, 'bad_args'), 1);
  });
});

describe('taskrail proxy without --retry', () => {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-proxy-no-retry-'));
  const callLog = join(dir, 'calls.log');
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('fails a task at the first upstream error, with the upstream code and message', async () => {
    // The upstream children (started on demand) inherit the proxy's environment.
    process.env['CALL_LOG'] = callLog;
    const proxy = await startInProcess({
      upstream: { kind: 'stdio', command: process.execPath, args: [CHATTY] },
    });
    try {
      const taskId = await callAsTask(proxy.url, 'flaky', { failures: 1 });
      const done = await waitForTask(proxy.url, taskId, ['completed', 'failed']);
      assert.equal((done as Failed).error?.code, -32603);
      assert.match((done as Failed).error?.message ?? '', /flaky: try again$/);
      assert.equal(logged(callLog, 'flaky'), 1);
    } finally {
      await proxy.close();
      delete process.env['CALL_LOG'];
    }
  });
});
