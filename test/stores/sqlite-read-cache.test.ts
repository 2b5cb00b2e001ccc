import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import { ReadCache } from '../../src/stores/sqlite/read-cache.js';
import { newTaskId } from '../../src/task/ids.js';
import { newTaskRecord } from '../../src/task/record.js';
import { complete, report } from '../../src/task/transitions.js';
import { startNode } from '../helpers/child.js';
import { tempDir } from './temp-dir.js';

const dir = tempDir();
after(() => dir.remove());
let counter = 0;
const freshPath = () => join(dir.path, `case-${++counter}.db`);
const REMOTE = fileURLToPath(new URL('./fixtures/sqlite-remote.js', import.meta.url));
const HOUR = 3_600_000;

function record(ttlMs: number | null = HOUR) {
  const input = { id: newTaskId(), principal: 'p', tool: 't', arguments: {}, ttlMs };
  return newTaskRecord({ ...input, pollIntervalMs: 100 }, Date.now());
}

/** Another OS process on the file; `send` resolves once it has committed the command. */
async function remote(path: string, aheadMs = 0) {
  const child = startNode(REMOTE, [path, String(aheadMs)]);
  await child.line(/^ready$/, 30_000);
  return {
    async send(line: string): Promise<void> {
      child.process.stdin!.write(`${line}\n`);
      // A command is words and task ids: nothing a pattern would read as syntax.
      await child.line(new RegExp(`^done ${line}$`), 30_000);
    },
    stop: () => child.kill('SIGTERM'),
  };
}

/** Reads `id` twice, so the second read (and the next ones) could come from the cache. */
async function warm(store: SqliteTaskStore, id: string) {
  await store.get(id);
  return store.get(id);
}

describe('SqliteTaskStore read cache', () => {
  it('sees a write committed by another process at its next get', async () => {
    const path = freshPath();
    const store = new SqliteTaskStore(path);
    const other = await remote(path);
    try {
      const [a, b, c] = [record(), record(), record()];
      for (const task of [a, b, c]) await store.create(task);
      for (const task of [a, b, c]) assert.equal((await warm(store, task.id))?.revision, 1);
      assert.ok(store.readCacheRows >= 3, 'the reads were kept');

      await other.send(`report ${a.id}`);
      const reported = await store.get(a.id);
      assert.equal(reported?.statusMessage, 'remote progress');
      assert.equal(reported.revision, 2);

      await other.send(`complete ${b.id}`);
      const completed = await store.get(b.id);
      assert.equal(completed?.status, 'completed');
      assert.deepEqual(completed.result, { content: [{ type: 'text', text: 'remote' }] });

      await warm(store, c.id);
      await other.send(`cancel ${c.id}`);
      assert.equal((await store.get(c.id))?.status, 'cancelled');
    } finally {
      await other.stop();
      await store.close();
    }
  });

  it('sees a task deleted by another process’s expiry sweep', async () => {
    const path = freshPath();
    const store = new SqliteTaskStore(path);
    // Its clock two hours ahead: the task, alive here, is expired there and swept.
    const other = await remote(path, 2 * HOUR);
    try {
      const task = record();
      await store.create(task);
      assert.equal((await warm(store, task.id))?.id, task.id);
      await other.send('sweep');
      assert.equal(await store.get(task.id), undefined);
    } finally {
      await other.stop();
      await store.close();
    }
  });

  it('sees another connection’s write in the same process, and its own writes', async () => {
    const path = freshPath();
    const [one, two] = [new SqliteTaskStore(path), new SqliteTaskStore(path)];
    try {
      const task = record();
      await one.create(task);
      const seen = await warm(one, task.id);
      assert.ok(seen !== undefined);
      await warm(two, task.id);
      const progressed = report(seen, 'from two', Date.now());
      assert.ok((await two.compareAndSet(progressed, 1)).ok);
      assert.equal((await one.get(task.id))?.statusMessage, 'from two');
      // one's own write, read back by one and by two
      const done = complete(progressed, { content: [] }, Date.now());
      assert.ok((await one.compareAndSet(done, 2)).ok);
      assert.equal((await one.get(task.id))?.status, 'completed');
      assert.equal((await two.get(task.id))?.status, 'completed');
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });

  it('still honours expiry for a cached task, and drops what it sweeps or deletes', async () => {
    let now = Date.now();
    const store = new SqliteTaskStore(freshPath(), { clock: () => now });
    try {
      const task = newTaskRecord(
        {
          id: newTaskId(),
          principal: 'p',
          tool: 't',
          arguments: {},
          ttlMs: 1000,
          pollIntervalMs: 100,
        },
        now,
      );
      await store.create(task);
      assert.equal((await warm(store, task.id))?.id, task.id);
      now += 1000;
      assert.equal(await store.get(task.id), undefined, 'expired at expiresAt');
      assert.deepEqual(await store.sweepExpired(10), [task.id]);
      assert.equal(store.readCacheRows, 0);
    } finally {
      await store.close();
    }
  });

  it('keeps at most readCacheRows rows, and none with 0', async () => {
    const path = freshPath();
    const small = new SqliteTaskStore(path, { readCacheRows: 2 });
    const none = new SqliteTaskStore(path, { readCacheRows: 0 });
    try {
      const tasks = [record(), record(), record()];
      for (const task of tasks) await small.create(task);
      for (const task of tasks) {
        assert.equal((await small.get(task.id))?.id, task.id);
        assert.equal((await none.get(task.id))?.id, task.id);
      }
      assert.equal(small.readCacheRows, 2);
      assert.equal(none.readCacheRows, 0);
    } finally {
      await Promise.all([small.close(), none.close()]);
    }
  });

  it('checks a cached row after the get was asked: a commit landing in between is seen', async () => {
    const path = freshPath();
    const store = new SqliteTaskStore(path);
    const raw = new Database(path);
    try {
      const task = record();
      await store.create(task);
      assert.equal((await warm(store, task.id))?.revision, 1);
      const asked = [store.get(task.id), store.get(task.id)];
      // Another connection commits after both asks, before the event loop's next check phase.
      raw
        .prepare("UPDATE tasks SET status_message = 'raw', revision = 2 WHERE id = ?")
        .run(task.id);
      for (const seen of await Promise.all(asked)) {
        assert.equal(seen?.statusMessage, 'raw');
        assert.equal(seen.revision, 2);
      }
    } finally {
      raw.close();
      await store.close();
    }
  });
});

describe('ReadCache.checkSoon', () => {
  it('validates once, in the next check phase, for everyone who asked before it', async () => {
    let version = 1;
    let versionReads = 0;
    const cache = new ReadCache(() => ((versionReads += 1), version), 10);
    cache.validate();
    cache.put('a', ['a']);
    const asks = [cache.checkSoon(), cache.checkSoon(), cache.checkSoon()];
    assert.equal(asks[0], asks[2], 'one check for the turn');
    version = 2; // another connection commits after the asks
    assert.deepEqual(await Promise.all(asks), [true, true, true]);
    assert.equal(versionReads, 2, 'the first validate and the one check');
    assert.equal(cache.has('a'), false, 'the commit emptied the cache');
    await cache.checkSoon();
    assert.equal(versionReads, 3, 'a later ask gets a check of its own');
  });

  it('resolves false when the check fails, so each reader validates for itself', async () => {
    const cache = new ReadCache(() => {
      throw new Error('database is locked');
    }, 10);
    assert.equal(await cache.checkSoon(), false);
  });
});
