import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TaskServer } from '../../src/server/index.js';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import { waitFor } from '../helpers/wait.js';
import { tempDir } from '../stores/temp-dir.js';
import { rpc } from './support.js';
import {
  assertSafe,
  assertTroubleError,
  CapturingLogger,
  executions,
  troubleServer,
} from './trouble-support.js';

const dir = tempDir('taskrail-full-');
const mounted = mountTmpfs(dir.path);
if (mounted !== true) process.stdout.write(`# skipping the full-disk suite: ${mounted}\n`);

/** A 4 MiB tmpfs as the store's disk, so "disk full" is real and cheap to reach. */
function mountTmpfs(path: string): true | string {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', path], { stdio: 'pipe' });
    return true;
  } catch (error) {
    return `cannot mount a tmpfs (needs root): ${String(error).split('\n')[0]}`;
  }
}

/** Writes zeros until the file system says ENOSPC. */
function fillDisk(file: string): void {
  const fd = openSync(file, 'w');
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as { code?: string }).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
}

describe(
  'store trouble: the SQLite file sits on a full disk',
  { skip: mounted !== true && mounted },
  () => {
    const file = join(dir.path, 'tasks.db');
    const filler = join(dir.path, 'filler');
    const logger = new CapturingLogger();
    let store: SqliteTaskStore;
    let app: TaskServer;
    let url: string;

    before(async () => {
      store = new SqliteTaskStore(file);
      app = troubleServer(store, logger);
      ({ url } = await app.listen(0));
    });
    after(async () => {
      await app.close(1000);
      await store.close();
      if (mounted === true) execFileSync('umount', ['-l', dir.path]);
      dir.remove();
    });

    it('answers creates with 503 -32603 while the disk is full, and works again once there is room', async () => {
      const ran = executions.count;
      fillDisk(filler);
      const answers = [];
      // Enough creates to fill what the WAL still had preallocated.
      for (let i = 0; i < 200; i++) {
        const reply = await rpc(url, 'tools/call', {
          name: 'quick',
          arguments: { pad: 'x'.repeat(2000) },
        });
        answers.push(reply);
        if (reply.status !== 200) break;
      }
      const refused = answers.at(-1);
      assert.equal(refused?.status, 503, JSON.stringify(refused?.body));
      assertTroubleError(refused?.body.error);
      assert.equal(refused?.body.result, undefined, 'never a tool result');
      assertSafe(JSON.stringify(refused?.body), [dir.path, 'SQLITE']);
      assert.match(String(logger.troubleLines()[0]?.fields['error']), /full|ENOSPC/i);
      rmSync(filler);
      const again = await rpc(url, 'tools/call', { name: 'quick', arguments: {} });
      assert.equal(again.status, 200, JSON.stringify(again.body));
      assert.equal(again.body.result?.['resultType'], 'task');
      // The reply leaves once the task is committed; its run starts right after, not before.
      await waitFor('the tool to run again', () => executions.count >= ran + 1);
    });
  },
);
