import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import { recordToParams, TASK_COLUMNS, TASK_PARAMS } from '../../src/stores/sqlite/rows.js';
import { MIGRATIONS } from '../../src/stores/sqlite/schema.js';
import { newTaskId } from '../../src/task/ids.js';
import { newTaskRecord, type TaskRecord } from '../../src/task/record.js';
import { complete } from '../../src/task/transitions.js';
import { startNode } from '../helpers/child.js';
import { tempDir } from './temp-dir.js';

const dir = tempDir();
after(() => dir.remove());
let counter = 0;
const freshPath = () => join(dir.path, `case-${++counter}`, 'tasks.db');
const WRITER = fileURLToPath(new URL('./fixtures/sqlite-count-writer.js', import.meta.url));

function record(now: number, extra: { ttlMs?: number; idempotencyKey?: string } = {}) {
  const { ttlMs = null, idempotencyKey } = extra;
  const input = { id: newTaskId(), principal: 'p', tool: 't', arguments: {}, ttlMs };
  return newTaskRecord(
    { ...input, pollIntervalMs: 1, ...(idempotencyKey && { idempotencyKey }) },
    now,
  );
}

/** The count the store keeps and the one the rows give; the test wants them equal. */
function counts(path: string): { kept: number; rows: number } {
  const db = new Database(path, { readonly: true });
  try {
    const kept = db.prepare("SELECT n FROM unfinished_counts WHERE principal = 'p'").pluck().get();
    const rows = db
      .prepare(
        "SELECT count(*) FROM tasks WHERE principal = 'p' AND status IN ('working', 'input_required')",
      )
      .pluck()
      .get();
    return { kept: (kept as number | undefined) ?? 0, rows: rows as number };
  } finally {
    db.close();
  }
}

describe('SQLite: the per-principal unfinished count kept by the store', () => {
  it('stays exact while another process finishes, cancels, sweeps and creates', async () => {
    const path = freshPath();
    const store = new SqliteTaskStore(path);
    try {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const outcome = await store.create(record(Date.now()), { maxUnfinished: 100 });
        assert.equal(outcome.position, i + 1);
        ids.push(outcome.task.id);
      }
      const child = startNode(WRITER, [path, JSON.stringify(ids.slice(0, 3))]);
      const mine = Promise.all(
        [1, 2, 3].map(() => store.create(record(Date.now()), { maxUnfinished: 100 })),
      );
      const [line] = await child.line(/^\{.*\}$/, 60_000);
      await child.exited;
      assert.equal(child.process.exitCode, 0, child.stderr());
      await mine;
      const report = JSON.parse(line) as { swept: number; places: number[] };
      assert.equal(report.swept, 3);
      // 5 + 3 here, 2 there, 3 finished there.
      assert.deepEqual(counts(path), { kept: 7, rows: 7 });
      assert.equal(await store.countUnfinished('p', 100), 7);
      assert.equal((await store.create(record(Date.now()), { maxUnfinished: 8 })).position, 8);
      await assert.rejects(store.create(record(Date.now()), { maxUnfinished: 8 }), {
        code: 'QUEUE_FULL',
      });
      assert.deepEqual(counts(path), { kept: 8, rows: 8 });
    } finally {
      await store.close();
    }
  });

  it('creates of one batch are placed in turn and refused past the cap, keyed ones among them', async () => {
    const path = freshPath();
    const store = new SqliteTaskStore(path);
    try {
      await store.create(record(Date.now()), { maxUnfinished: 5 });
      // Started in one turn: one write transaction, which reads the stored count once.
      const outcomes = await Promise.allSettled(
        ['', 'a', '', 'b', '', ''].map((key) => {
          const task =
            key === '' ? record(Date.now()) : record(Date.now(), { idempotencyKey: key });
          return store.create(task, { maxUnfinished: 5 });
        }),
      );
      const places = outcomes.map((o) => (o.status === 'fulfilled' ? o.value.position : 'full'));
      assert.deepEqual(places, [2, 3, 4, 5, 'full', 'full']);
      for (const refused of outcomes.slice(4)) {
        assert.equal((refused as PromiseRejectedResult).reason.code, 'QUEUE_FULL');
      }
      assert.deepEqual(counts(path), { kept: 5, rows: 5 });
      // The next transaction reads the count written by this one.
      await assert.rejects(store.create(record(Date.now()), { maxUnfinished: 5 }), {
        code: 'QUEUE_FULL',
      });
      assert.equal((await store.create(record(Date.now()), { maxUnfinished: 6 })).position, 6);
      assert.deepEqual(counts(path), { kept: 6, rows: 6 });
    } finally {
      await store.close();
    }
  });

  it('a keyed create refused after it deleted an expired holder leaves the count as it was', async () => {
    const path = freshPath();
    let now = 1_000_000;
    const store = new SqliteTaskStore(path, { clock: () => now });
    try {
      await store.create(record(now, { ttlMs: 10, idempotencyKey: 'k' }));
      const other = (await store.create(record(now))).task;
      now += 100;
      // Its id is taken: the insert fails after the expired holder of `k` was deleted.
      const clash: TaskRecord = { ...record(now, { idempotencyKey: 'k' }), id: other.id };
      const [refused, created] = await Promise.allSettled([
        store.create(clash, { maxUnfinished: 10 }),
        store.create(record(now), { maxUnfinished: 10 }),
      ]);
      assert.equal(refused.status, 'rejected');
      assert.equal((refused.reason as { code?: string }).code, 'CONFLICT');
      assert.equal(created.status, 'fulfilled');
      assert.deepEqual(counts(path), { kept: 3, rows: 3 });
      await store.compareAndSet(complete(other, { content: [] }, now), other.revision);
      assert.deepEqual(counts(path), { kept: 2, rows: 2 });
    } finally {
      await store.close();
    }
  });

  it('a schema 5 file (the count kept by triggers) keeps its count once migrated', async () => {
    const path = freshPath();
    mkdirSync(dirname(path), { recursive: true });
    const old = new Database(path);
    old.exec(
      'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL) STRICT;',
    );
    MIGRATIONS.slice(0, 5).forEach((sql, i) => {
      old.exec(sql);
      old.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, 0)').run(i + 1);
    });
    const insert = old.prepare(`INSERT INTO tasks (${TASK_COLUMNS}) VALUES (${TASK_PARAMS})`);
    const tasks = [1, 2, 3].map(() => record(Date.now()));
    for (const task of tasks) insert.run(recordToParams(task));
    insert.run(recordToParams(complete(record(Date.now()), { content: [] }, Date.now())));
    old.close();
    assert.deepEqual(counts(path), { kept: 3, rows: 3 });

    const store = new SqliteTaskStore(path);
    try {
      const first = tasks[0] as TaskRecord;
      await store.compareAndSet(complete(first, { content: [] }, Date.now()), first.revision);
      assert.equal((await store.create(record(Date.now()), { maxUnfinished: 10 })).position, 3);
    } finally {
      await store.close();
    }
    assert.deepEqual(counts(path), { kept: 3, rows: 3 });
    const db = new Database(path, { readonly: true });
    const triggers = db.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger'").all();
    db.close();
    assert.deepEqual(triggers, []);
  });
});
