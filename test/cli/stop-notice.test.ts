import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { MemoryLedger, TaskrailClient } from '../../src/client/index.js';
import { waitFor } from '../helpers/wait.js';
import { runCli, startServe, tempDir } from '../client/support.js';

/** Issue 30 item 7: a stopping serve said nothing while it waited for its running tasks. */
describe('serve on SIGTERM with a task running', () => {
  const dir = tempDir('stop-notice');
  after(() => dir.remove());

  it('says how many running tasks it waits for, and for how long at most', async () => {
    const serve = await startServe(dir.path);
    const home = join(dir.path, 'home');
    try {
      const created = await runCli(
        ['call', serve.url, 'slow_compute', '--args', '{"seconds":2}', '--detach'],
        home,
      );
      assert.equal(created.code, 0, created.stderr);
      const client = new TaskrailClient({
        url: serve.url,
        ledger: new MemoryLedger(),
        push: false,
      });
      try {
        const id = created.stdout.trim();
        await waitFor('the handler running', async () =>
          /computing/.test((await client.fetchTask(id))?.statusMessage ?? ''),
        );
      } finally {
        client.close();
      }
    } finally {
      await serve.stop();
    }
    assert.match(
      serve.child.stderr(),
      /graceful stop: waiting up to 10 s for 1 running task to finish/,
      serve.child.stderr(),
    );
  });
});
