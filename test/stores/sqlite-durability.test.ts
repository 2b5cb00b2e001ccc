/**
 * `synchronous: 'full'` with group commit: the whole store contract, then what the mode
 * promises: a write's promise resolves only once its batch is committed, concurrent writes
 * share one commit (counted in the WAL file: with synchronous=FULL each commit is one fsync),
 * and a batch that fails fails every write in it, with nothing written.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import { taskStoreContract } from '../../src/testing/index.js';
import { newTaskId } from '../../src/task/ids.js';
import { newTaskRecord, type TaskRecord } from '../../src/task/record.js';
import { complete } from '../../src/task/transitions.js';
import { tempDir } from './temp-dir.js';
import { walCommits } from './wal.js';

const BATCH_CHILD = fileURLToPath(new URL('./fixtures/sqlite-full-batch.js', import.meta.url));

taskStoreContract('sqlite synchronous=full', async ({ clock }) => {
  const dir = tempDir();
  const path = join(dir.path, 'tasks.db');
  const open = async () => new SqliteTaskStore(path, { clock, synchronous: 'full' });
  return {
    store: await open(),
    reopen: open,
    localEvents: true,
    cleanup: async () => dir.remove(),
  };
});

function record(): TaskRecord {
  return newTaskRecord(
    { id: newTaskId(), principal: 'p', tool: 't', arguments: {}, ttlMs: null, pollIntervalMs: 9 },
    Date.now(),
  );
}

describe('sqlite group commit (and synchronous=full)', () => {
  it('resolves every create and completion only once its row is in the file', async () => {
    const dir = tempDir();
    const path = join(dir.path, 'tasks.db');
    const store = new SqliteTaskStore(path, { synchronous: 'full' });
    const reader = new Database(path, { readonly: true });
    const status = reader.prepare('SELECT status FROM tasks WHERE id = ?').pluck();
    try {
      const tasks = Array.from({ length: 64 }, record);
      const seen = await Promise.all(
        tasks.map((task) => store.create(task).then(() => status.get(task.id))),
      );
      assert.deepEqual(
        seen,
        tasks.map(() => 'working'),
      );
      const done = await Promise.all(
        tasks.map(async (task) => {
          const outcome = await store.compareAndSet(complete(task, { content: [] }, Date.now()), 1);
          assert.equal(outcome.ok, true);
          return status.get(task.id);
        }),
      );
      assert.deepEqual(
        done,
        tasks.map(() => 'completed'),
      );
    } finally {
      reader.close();
      await store.close();
      dir.remove();
    }
  });

  for (const synchronous of ['full', 'normal'] as const) {
    it(`lets concurrent creates share one commit, and gives each sequential create its own (${synchronous})`, async () => {
      const dir = tempDir();
      const path = join(dir.path, 'tasks.db');
      const store = new SqliteTaskStore(path, { synchronous });
      try {
        assert.equal(store.synchronous, synchronous);
        const start = walCommits(path);
        for (let i = 0; i < 5; i += 1) await store.create(record());
        const sequential = walCommits(path) - start;
        await Promise.all(Array.from({ length: 32 }, () => store.create(record())));
        const concurrent = walCommits(path) - start - sequential;
        assert.equal(sequential, 5, 'one commit per create made alone');
        assert.equal(concurrent, 1, '32 creates asked for at once share one commit');
        const reader = new Database(path, { readonly: true });
        assert.equal(reader.prepare('SELECT count(*) FROM tasks').pluck().get(), 37);
        reader.close();
      } finally {
        await store.close();
        dir.remove();
      }
    });
  }

  it('fails every create of a batch that cannot be written, and writes none of it', () => {
    const dir = tempDir();
    const path = join(dir.path, 'tasks.db');
    try {
      // 1 MiB file-size limit; the batch needs 16 × 128 KiB.
      const out = execFileSync(
        'bash',
        [
          '-c',
          `ulimit -f 1024 && exec "$0" "$@"`,
          process.execPath,
          BATCH_CHILD,
          path,
          '16',
          '131072',
        ],
        { encoding: 'utf8' },
      );
      const report = JSON.parse(out.trim().split('\n').pop() as string) as {
        before: string[];
        batch: string[];
        outcomes: string[];
        after: string;
        afterOutcome: string;
      };
      assert.deepEqual(
        report.outcomes,
        report.batch.map(() => 'STORE_UNAVAILABLE'),
      );
      assert.equal(report.afterOutcome, 'ok', 'the store keeps working after a failed batch');
      const reader = new Database(path, { readonly: true });
      const ids = new Set(reader.prepare('SELECT id FROM tasks').pluck().all() as string[]);
      reader.close();
      assert.deepEqual([...ids].sort(), [...report.before, report.after].sort());
    } finally {
      dir.remove();
    }
  });
});
