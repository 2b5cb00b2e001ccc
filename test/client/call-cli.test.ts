import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Ledger } from '../../src/client/index.js';
import { waitFor } from '../helpers/wait.js';
import {
  runCli,
  spawnCli,
  startProxy,
  startServe,
  tempDir,
  type Proxy,
  type Serve,
} from './support.js';

describe('taskrail call: exit codes against taskrail serve', () => {
  const dir = tempDir('call');
  let serve: Serve;
  let proxy: Proxy;
  const home = (name: string): string => `${dir.path}/${name}`;

  before(async () => {
    serve = await startServe(dir.path);
    proxy = await startProxy(serve.url);
  });
  after(async () => {
    await proxy.close();
    await serve.stop();
    dir.remove();
  });

  it('0: a synchronous tool result is printed', async () => {
    const r = await runCli(['call', serve.url, 'greet', '--args', '{"name":"Ada"}'], home('h0'));
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'Hello, Ada!\n');
  });

  it('0: a task is recorded in the ledger and its result printed', async () => {
    const r = await runCli(
      ['call', serve.url, 'slow_compute', '--args', '{"seconds":0.3,"label":"sum"}'],
      home('h0t'),
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Finished sum after 0.3 second/);
    const ledger = Ledger.open(home('h0t'));
    const [entry] = ledger.list();
    ledger.close();
    assert.equal(entry?.status, 'completed');
    assert.equal(entry?.tool, 'slow_compute');
  });

  it('--json prints the raw result', async () => {
    const r = await runCli(
      ['call', serve.url, 'greet', '--args', '{"name":"Bo"}', '--json'],
      home('hj'),
    );
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual((JSON.parse(r.stdout) as { content: unknown[] }).content, [
      { type: 'text', text: 'Hello, Bo!' },
    ]);
  });

  it('1: a tool error (isError) is printed and exits 1', async () => {
    const r = await runCli(['call', serve.url, 'failing_job'], home('h1'));
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stdout, /The job failed/);
  });

  it('2: a JSON-RPC failure exits 2', async () => {
    const r = await runCli(['call', serve.url, 'protocol_error_job'], home('h2'));
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /failed: error -?\d+/);
  });

  it("2: --no-tasks on a task-required tool of serve with its defaults reports the missing capability (the spec's MUST, fallback tools on)", async () => {
    const r = await runCli(['call', serve.url, 'failing_job', '--no-tasks'], home('h2d'));
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /-32021/);
  });

  it('2: --no-tasks on a task-required tool of serve --no-fallback-tools reports the missing capability', async () => {
    const strictDir = tempDir('call-strict');
    const strict = await startServe(strictDir.path, ['--no-fallback-tools']);
    try {
      const r = await runCli(['call', strict.url, 'failing_job', '--no-tasks'], home('h2n'));
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /-32021/);
    } finally {
      await strict.stop();
      strictDir.remove();
    }
  });

  it('--no-tasks gets a synchronous answer and records nothing', async () => {
    const r = await runCli(
      ['call', serve.url, 'slow_compute', '--args', '{"seconds":0}', '--no-tasks'],
      home('hn'),
    );
    assert.equal(r.code, 0, r.stderr);
    const ledger = Ledger.open(home('hn'));
    assert.equal(ledger.list().length, 0);
    ledger.close();
  });

  it('3: SIGINT sends tasks/cancel and reports cancelled only after the server says so', async () => {
    const before = proxy.seen.length;
    const child = spawnCli(
      ['call', proxy.url, 'slow_compute', '--args', '{"seconds":60}'],
      home('h3'),
    );
    const ledger = Ledger.open(home('h3'));
    let code: number | null;
    try {
      await waitFor('the task in the ledger', () => ledger.list()[0]?.ownerPid !== undefined);
      const exited = new Promise<number | null>((resolve) =>
        child.process.once('exit', (c) => resolve(c)),
      );
      child.process.kill('SIGINT');
      code = await exited;
    } finally {
      await child.kill();
    }
    assert.equal(code, 3, child.stderr());
    assert.match(child.stderr(), /cancelled/);
    const mine = proxy.seen.slice(before);
    const cancelAt = mine.findIndex((s) => s.method === 'tasks/cancel');
    assert.ok(cancelAt >= 0, 'tasks/cancel was sent');
    // The terminal status comes from a tasks/get after the cancel, or from the listen stream.
    const confirmed = mine.slice(cancelAt + 1).some((s) => s.method === 'tasks/get');
    const pushed = mine.some((s) => s.method === 'subscriptions/listen');
    assert.ok(confirmed || pushed, 'the server reported the end');
    assert.equal(mine.filter((s) => s.method === 'notifications/cancelled').length, 0);
    assert.equal(ledger.list()[0]?.status, 'cancelled');
    ledger.close();
  });

  it('4: an unreachable server and bad arguments JSON are usage/connection errors', async () => {
    const down = await runCli(
      ['call', 'http://127.0.0.1:9/mcp', 'greet', '--args', '{"name":"x"}'],
      home('h4'),
    );
    assert.equal(down.code, 4);
    assert.match(down.stderr, /cannot reach/);
    const bad = await runCli(['call', serve.url, 'greet', '--args', '{nope'], home('h4'));
    assert.equal(bad.code, 4);
    assert.match(bad.stderr, /not valid JSON/);
  });

  it('4: a task needing input fails clearly when stdin is not a terminal, and stays parked', async () => {
    const r = await runCli(
      ['call', serve.url, 'confirm_delete', '--args', '{"filename":"a.txt"}'],
      home('h4i'),
    );
    assert.equal(r.code, 4);
    assert.match(r.stderr, /not a terminal.*taskrail tasks answer/s);
    const ledger = Ledger.open(home('h4i'));
    assert.equal(ledger.list()[0]?.status, 'input_required');
    ledger.close();
  });

  it('5: arguments that break the inputSchema are rejected with nothing sent', async () => {
    const before = proxy.count('tools/call');
    const r = await runCli(['call', proxy.url, 'greet', '--args', '{"name":5}'], home('h5'));
    assert.equal(r.code, 5);
    assert.match(r.stderr, /inputSchema/);
    assert.equal(proxy.count('tools/call'), before, 'no tools/call reached the server');
  });

  it('--detach prints the id alone; tasks show/list/wait work on it', async () => {
    const h = home('hd');
    const r = await runCli(
      ['call', serve.url, 'slow_compute', '--args', '{"seconds":0.4}', '--detach'],
      h,
    );
    assert.equal(r.code, 0, r.stderr);
    const id = r.stdout.trim();
    assert.match(r.stdout, /^[A-Za-z0-9_-]+\n$/);
    const shown = JSON.parse((await runCli(['tasks', 'show', id, '--json'], h)).stdout) as Record<
      string,
      unknown
    >;
    for (const key of [
      'id',
      'server',
      'tool',
      'arguments',
      'status',
      'statusMessage',
      'createdAt',
      'updatedAt',
    ]) {
      assert.ok(key in shown, key);
    }
    assert.equal(shown.id, id);
    const waited = await runCli(['tasks', 'wait', id], h);
    assert.equal(waited.code, 0, waited.stderr);
    assert.match(waited.stdout, /Finished/);
    const done = JSON.parse((await runCli(['tasks', 'show', id, '--json'], h)).stdout) as Record<
      string,
      unknown
    >;
    assert.equal(done.status, 'completed');
    assert.ok(done.result !== undefined);
    const list = await runCli(['tasks', 'list'], h);
    const [header, line] = list.stdout.split('\n');
    assert.deepEqual(header?.split(/\s{2,}/), ['ID', 'SERVER', 'TOOL', 'STATUS', 'AGE', 'MESSAGE']);
    assert.deepEqual(line?.split(/\s{2,}/).slice(0, 4), [
      id,
      serve.url,
      'slow_compute',
      'completed',
    ]);
  });

  it('tasks cancel cancels and waits; tasks wait on a cancelled task exits 3', async () => {
    const h = home('hc');
    const id = (
      await runCli(['call', serve.url, 'slow_compute', '--args', '{"seconds":60}', '--detach'], h)
    ).stdout.trim();
    const r = await runCli(['tasks', 'cancel', id], h);
    assert.equal(r.code, 3, r.stderr);
    assert.equal(r.stdout, `${id} cancelled\n`);
    assert.equal((await runCli(['tasks', 'wait', id], h)).code, 3);
  });
});
