import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  CLI,
  runCli,
  startProxy,
  startServe,
  tempDir,
  type CliResult,
  type Proxy,
  type Serve,
} from '../client/support.js';
import { runNode } from '../helpers/child.js';

/** Runs the CLI with stdout closed by the reader at once, as `… | head -0` would. */
function runWithClosedStdout(args: string[], home: string): Promise<CliResult> {
  return runNode(CLI, args, { TASKRAIL_HOME: home }, { closeStdout: true });
}

describe('CLI: tools and tasks list', () => {
  const dir = tempDir('cli-use');
  let serve: Serve;
  let proxy: Proxy;
  before(async () => {
    serve = await startServe(dir.path);
    proxy = await startProxy(serve.url);
  });
  after(async () => {
    await proxy.close();
    await serve.stop();
    dir.remove();
  });

  it('tools lists name, task mode and description; --json prints the tools/list result', async () => {
    const text = await runCli(['tools', serve.url], join(dir.path, 'h-tools'));
    assert.equal(text.code, 0, text.stderr);
    const lines = text.stdout.trim().split('\n');
    const cells = lines.map((line) => line.split(/\s{2,}/));
    assert.ok(
      cells.some((c) => c.join('|') === 'greet|forbidden|Says hello (always synchronous).'),
      text.stdout,
    );
    assert.ok(
      cells.some(
        (c) => c[0] === 'slow_compute' && c[1] === 'optional' && c[2]?.startsWith('Sleeps'),
      ),
      text.stdout,
    );
    const json = await runCli(['tools', serve.url, '--json'], join(dir.path, 'h-tools'));
    assert.equal(json.code, 0, json.stderr);
    const names = (JSON.parse(json.stdout) as { tools: { name: string }[] }).tools.map(
      (t) => t.name,
    );
    assert.ok(names.includes('confirm_delete') && names.includes('greet'), json.stdout);
  });

  it('tools sends --bearer, else $TASKRAIL_BEARER; a bad URL is a usage error', async () => {
    const home = join(dir.path, 'h-bearer');
    const bearers = () => proxy.seen.map((s) => s.headers.authorization);
    await runCli(['tools', proxy.url, '--json'], home, { TASKRAIL_BEARER: 'from-env' });
    assert.ok(bearers().includes('Bearer from-env'), 'the env token was not sent');
    await runCli(['tools', proxy.url, '--json', '--bearer', 'from-flag'], home, {
      TASKRAIL_BEARER: 'from-env',
    });
    assert.equal(bearers().at(-1), 'Bearer from-flag');
    const bad = await runCli(['tools', 'not a url'], home);
    assert.equal(bad.code, 4);
    assert.match(bad.stderr, /not a URL/);
  });

  it("tasks list shows the server's live status under a header, and --json", async () => {
    const home = join(dir.path, 'h-list');
    const detached = await runCli(
      ['call', serve.url, 'confirm_delete', '--args', '{"filename":"a.txt"}', '--detach'],
      home,
    );
    assert.equal(detached.code, 0, detached.stderr);
    const id = detached.stdout.trim();
    // The ledger has not seen the question yet; tasks show asks the server.
    const shown = JSON.parse((await runCli(['tasks', 'show', id, '--json'], home)).stdout) as {
      status: string;
      source: string;
    };
    assert.deepEqual([shown.status, shown.source], ['input_required', 'from the server']);
    const text = await runCli(['tasks', 'list'], home);
    assert.equal(text.code, 0, text.stderr);
    const [header, line] = text.stdout.split('\n');
    assert.deepEqual(header?.split(/\s{2,}/), ['ID', 'SERVER', 'TOOL', 'STATUS', 'AGE', 'MESSAGE']);
    assert.deepEqual(line?.split(/\s{2,}/).slice(0, 4), [
      id,
      serve.url,
      'confirm_delete',
      'input_required',
    ]);
    const json = JSON.parse((await runCli(['tasks', 'list', '--json'], home)).stdout) as {
      id: string;
      status: string;
      live: boolean;
    }[];
    assert.deepEqual(
      json.map((t) => [t.id, t.status, t.live]),
      [[id, 'input_required', true]],
    );
    const prefix = await runCli(['tasks', 'cancel', id.slice(0, 10)], home);
    assert.equal(prefix.code, 3, prefix.stderr);
  });

  it('tasks list --status tool_error shows tasks that ended with an isError result', async () => {
    const home = join(dir.path, 'h-status');
    const failed = await runCli(['call', serve.url, 'failing_job'], home);
    assert.equal(failed.code, 1, failed.stderr);
    const done = await runCli(
      ['call', serve.url, 'slow_compute', '--args', '{"seconds":0.1}'],
      home,
    );
    assert.equal(done.code, 0, done.stderr);
    const ids = async (status: string): Promise<string[]> => {
      const r = await runCli(['tasks', 'list', '--status', status], home);
      assert.equal(r.code, 0, r.stderr);
      return r.stdout
        .trim()
        .split('\n')
        .slice(1)
        .map((line) =>
          line
            .split(/\s{2,}/)
            .slice(2, 4)
            .join(' '),
        );
    };
    assert.deepEqual(await ids('tool_error'), ['failing_job tool_error']);
    assert.deepEqual(await ids('tool-error'), ['failing_job tool_error']);
    assert.deepEqual(await ids('completed'), ['slow_compute completed']);
    assert.deepEqual((await ids('completed,tool_error')).length, 2);
    assert.deepEqual(await ids('working'), []);
    const bad = await runCli(['tasks', 'list', '--status', 'broken'], home);
    assert.equal(bad.code, 4);
    assert.match(bad.stderr, /tool_error/);
  });

  it('tasks list into a closed pipe exits quietly, without an EPIPE stack', async () => {
    const home = join(dir.path, 'h-pipe');
    await runCli(['call', serve.url, 'greet', '--args', '{"name":"p"}'], home);
    const result = await runWithClosedStdout(['tasks', 'list'], home);
    assert.equal(result.stderr, '');
    assert.equal(result.code, 0);
  });
});
