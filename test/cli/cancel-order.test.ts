import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Ledger } from '../../src/client/index.js';
import { waitFor } from '../helpers/wait.js';
import {
  spawnCli,
  startProxy,
  startServe,
  tempDir,
  type Proxy,
  type Serve,
} from '../client/support.js';

/**
 * Issue 30 item 8: Ctrl-C in `call` printed "cancelled" before "cancel requested, waiting for the
 * server to stop it" when the terminal status arrived before the cancel's own reply. A proxy
 * that holds the `tasks/cancel` reply back makes that order certain.
 */
describe('Ctrl-C in taskrail call', () => {
  const dir = tempDir('cancel-order');
  let serve: Serve;
  let proxy: Proxy;

  before(async () => {
    serve = await startServe(dir.path);
    proxy = await startProxy(serve.url, {
      delayReply: (seen) => (seen.method === 'tasks/cancel' ? 1500 : 0),
    });
  });
  after(async () => {
    await proxy.close();
    await serve.stop();
    dir.remove();
  });

  it('says the cancel was requested before it says the task is cancelled', async () => {
    const home = join(dir.path, 'home');
    const child = spawnCli(['call', proxy.url, 'slow_compute', '--args', '{"seconds":60}'], home);
    const ledger = Ledger.open(home);
    let code: number | null;
    try {
      await waitFor('the task in the ledger', () => ledger.list()[0]?.ownerPid !== undefined, {
        timeoutMs: 30_000,
      });
      const exited = new Promise<number | null>((resolve) =>
        child.process.once('exit', (c) => resolve(c)),
      );
      child.process.kill('SIGINT');
      code = await exited;
    } finally {
      await child.kill();
      ledger.close();
    }
    const lines = child.stderr().split('\n');
    assert.equal(code, 3, child.stderr());
    const requested = lines.findIndex((line) => line.includes('cancel requested'));
    const ended = lines.findIndex((line) => /\bcancelled\b/.test(line));
    assert.ok(requested >= 0, child.stderr());
    assert.ok(ended > requested, `"cancelled" came first:\n${child.stderr()}`);
  });
});
