import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  runCli,
  startProxy,
  startServe,
  tempDir,
  type Proxy,
  type Serve,
} from '../client/support.js';

const TASK_COMMANDS = ['list', 'show', 'wait', 'output', 'cancel', 'answer', 'resume'];

describe('CLI: connection options on every command that talks to a server', () => {
  const dir = tempDir('cli-conn');
  const home = join(dir.path, 'home');
  let serve: Serve;
  let proxy: Proxy;
  before(async () => {
    const tokens = join(dir.path, 'tokens.json');
    writeFileSync(tokens, JSON.stringify({ 'tok-a': 'alice', 'tok-b': 'bob' }));
    serve = await startServe(dir.path, ['--auth', `tokens:${tokens}`]);
    proxy = await startProxy(serve.url);
  });
  after(async () => {
    await proxy.close();
    await serve.stop();
    dir.remove();
  });

  it('call, tools and every tasks subcommand take --bearer and --header', async () => {
    for (const args of [['call'], ['tools'], ...TASK_COMMANDS.map((sub) => ['tasks', sub])]) {
      const help = (await runCli([...args, '--help'], home)).stdout;
      assert.match(help, /--bearer <token>/, args.join(' '));
      assert.match(help, /--header <name: value>/, args.join(' '));
    }
    const bad = await runCli(['tasks', 'list', '--header', 'no colon'], home);
    assert.match(bad.stderr, /must be 'Name: value'/);
  });

  it('tasks show asks the server (with the flags) and says where the record comes from', async () => {
    const created = await runCli(
      [
        'call',
        proxy.url,
        'slow_compute',
        '--args',
        '{"seconds":0.2}',
        '--detach',
        '--bearer',
        'tok-a',
      ],
      home,
    );
    const id = created.stdout.trim();
    assert.equal(created.code, 0, created.stderr);
    // The ledger saw it working; by now the server has it completed.
    await runCli(['tasks', 'wait', id, '--bearer', 'tok-a'], join(dir.path, 'other-home'));
    const shown = await runCli(['tasks', 'show', id, '--header', 'X-Team: blue'], home);
    assert.match(shown.stdout, /^status: +completed$/m);
    assert.match(shown.stdout, /^source: +from the server$/m);
    const get = proxy.seen.filter((seen) => seen.method === 'tasks/get').at(-1);
    assert.equal(get?.headers['x-team'], 'blue');
    assert.equal(get?.headers['authorization'], 'Bearer tok-a');

    // Bob's token: the server does not know Alice's task to him.
    const asBob = await runCli(['tasks', 'show', id, '--bearer', 'tok-b', '--json'], home);
    const record = JSON.parse(asBob.stdout) as { status: string; source: string };
    assert.equal(record.status, 'lost');
    assert.match(record.source, /^from the ledger \(the server said it does not know the task\)$/);
    const listed = (await runCli(['tasks', 'list', '--bearer', 'tok-b'], home)).stdout;
    const line = listed.split('\n').find((l) => l.startsWith(id)) ?? '';
    assert.match(line, / lost /);
    assert.doesNotMatch(line, /\?/);
  });

  it('tasks show falls back to the ledger when the server does not answer', async () => {
    const gone = await startProxy(serve.url);
    const id = (
      await runCli(
        [
          'call',
          gone.url,
          'slow_compute',
          '--args',
          '{"seconds":30}',
          '--detach',
          '--bearer',
          'tok-a',
        ],
        home,
      )
    ).stdout.trim();
    await gone.close();
    const shown = await runCli(['tasks', 'show', id], home);
    assert.match(shown.stdout, /^status: +working$/m);
    assert.match(shown.stdout, /^source: +from the ledger \(the server did not answer\)$/m);
  });

  it("prints a failed task's error once", async () => {
    const failed = await runCli(
      ['call', serve.url, 'protocol_error_job', '--bearer', 'tok-a'],
      home,
    );
    assert.equal(failed.code, 2);
    assert.equal(
      failed.stderr.split('Upstream service rejected the job').length - 1,
      1,
      failed.stderr,
    );
  });
});
