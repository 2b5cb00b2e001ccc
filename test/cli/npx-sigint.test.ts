import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Ledger } from '../../src/client/index.js';
import { CLI, startProxy, startServe, tempDir, type Proxy, type Serve } from '../client/support.js';
import { waitFor } from '../helpers/wait.js';

/**
 * Ctrl-C on `npx taskrail call` as a terminal delivers it: one SIGINT to every process of the
 * foreground group (npm and the CLI), and npm forwards its copy to the CLI as well. The CLI must
 * count that as one interrupt, cancel the task and exit 3 through npm.
 *
 * `--script-shell=bash`: npm runs a bin through `sh -c`, and Debian's dash ends itself with
 * SIGINT after its child exits whatever the child's code, so npm reports 130 there whatever the
 * CLI does (README, "Exit codes"); bash passes the child's code on.
 */
describe('npx taskrail call + Ctrl-C', () => {
  const dir = tempDir('npx');
  const project = join(dir.path, 'project');
  let serve: Serve;
  let proxy: Proxy;

  before(async () => {
    serve = await startServe(dir.path);
    proxy = await startProxy(serve.url);
    mkdirSync(join(project, 'node_modules', '.bin'), { recursive: true });
    writeFileSync(join(project, 'package.json'), '{"name":"app","private":true}');
    const bin = join(project, 'node_modules', '.bin', 'taskrail');
    writeFileSync(
      bin,
      `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} "$@"\n`,
    );
    chmodSync(bin, 0o755);
  });
  after(async () => {
    await proxy.close();
    await serve.stop();
    dir.remove();
  });

  it('exits 3 once the server reports the task cancelled', async () => {
    const home = join(dir.path, 'home');
    const args = ['call', proxy.url, 'slow_compute', '--args', '{"seconds":60}'];
    // A process group of its own, as a terminal's foreground job has.
    const npx = spawn(
      'npm',
      ['exec', '--offline', '--script-shell=bash', '--', 'taskrail', ...args],
      {
        cwd: project,
        detached: true,
        env: { ...process.env, TASKRAIL_HOME: home },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    npx.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      npx.once('exit', (code, signal) => resolve({ code, signal })),
    );
    const ledger = Ledger.open(home);
    try {
      await waitFor('the task in the ledger', () => ledger.list()[0]?.ownerPid !== undefined);
      process.kill(-npx.pid!, 'SIGINT');
      const { code, signal } = await exited;
      assert.equal(signal, null, stderr);
      assert.equal(code, 3, stderr);
      assert.match(stderr, /cancelled/);
      assert.doesNotMatch(stderr, /stopped waiting/);
      assert.equal(proxy.count('tasks/cancel'), 1);
      assert.equal(ledger.list()[0]?.status, 'cancelled');
    } finally {
      if (npx.exitCode === null && npx.signalCode === null) process.kill(-npx.pid!, 'SIGKILL');
      ledger.close();
    }
  });
});
