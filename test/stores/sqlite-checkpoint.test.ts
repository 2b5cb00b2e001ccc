import assert from 'node:assert/strict';
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import {
  AUTOCHECKPOINT_FRAMES,
  Checkpointer,
  COMMITS_PER_LOOK,
} from '../../src/stores/sqlite/checkpointer.js';
import { newTaskId } from '../../src/task/ids.js';
import { newTaskRecord } from '../../src/task/record.js';
import { runNode } from '../helpers/child.js';
import { waitFor } from '../helpers/wait.js';
import { tempDir } from './temp-dir.js';

const dir = tempDir();
after(() => dir.remove());
let counter = 0;
const freshPath = () => join(dir.path, `case-${++counter}.db`);

function record(i: number) {
  const input = {
    id: newTaskId(),
    principal: 'p',
    tool: 't',
    arguments: { i, pad: 'x'.repeat(2000) },
    ttlMs: null,
    pollIntervalMs: 100,
  };
  return newTaskRecord(input, Date.now());
}

async function createMany(store: SqliteTaskStore, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) ids.push((await store.create(record(i))).task.id);
  return ids;
}

/** Rows in the file, read on a connection of its own (what another process would see). */
function rowsInFile(path: string): number {
  const db = new Database(path, { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM tasks').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

function pageSizeOf(path: string): number {
  const db = new Database(path, { readonly: true });
  try {
    return Number(db.pragma('page_size', { simple: true }));
  } finally {
    db.close();
  }
}

describe('sqlite: WAL checkpoints run in a worker thread', () => {
  it('checkpoints the WAL from the worker and starts it over, losing no write', async () => {
    const path = freshPath();
    const store = new SqliteTaskStore(path);
    try {
      // Each create commits a few pages: more than 1000 frames in all.
      const ids = await createMany(store, 600);
      const { checkpointedFrames } = await waitFor('the worker to checkpoint', () => {
        const state = store.checkpointWorker;
        return state.checkpointedFrames > 0 && state;
      });
      assert.ok(checkpointedFrames >= AUTOCHECKPOINT_FRAMES, `${checkpointedFrames} frames`);
      // The worker empties the WAL file (TRUNCATE) and starts it over, so once the writes stop
      // it holds fewer frames than the threshold: SQLite's own checkpoint reuses the file from
      // the start but never shrinks it below the largest size it reached (over the threshold).
      // (Frames committed after the last checkpoint stay until the next one: not 0.)
      const thresholdBytes = AUTOCHECKPOINT_FRAMES * (pageSizeOf(path) + 24);
      await waitFor('a WAL started over', () => statSync(`${path}-wal`).size < thresholdBytes);
      await createMany(store, 1);
      assert.equal(rowsInFile(path), ids.length + 1);
    } finally {
      await store.close();
    }
    assert.equal(store.checkpointWorker.running, false);
    assert.equal(rowsInFile(path), 601);
  });

  it("starts no worker thread (~7 MiB) until the WAL holds a checkpoint's worth", async () => {
    const path = freshPath();
    const wal = `${path}-wal`;
    const store = new SqliteTaskStore(path);
    try {
      // The schema written at open was checkpointed on the spot: nothing waits in the WAL.
      assert.equal(store.checkpointWorker.running, false);
      assert.ok(!existsSync(wal) || statSync(wal).size === 0);
      await store.get(newTaskId());
      // Sixteen commits, one after another: the WAL is looked at after the last.
      await createMany(store, 16);
      assert.ok(store.checkpointWorker.walLooks >= 1, 'the WAL was looked at');
      assert.equal(store.checkpointWorker.running, false, 'a few writes start no worker');
      const thresholdBytes = AUTOCHECKPOINT_FRAMES * (pageSizeOf(path) + 24);
      assert.ok(statSync(wal).size > 0 && statSync(wal).size < thresholdBytes);
      while (statSync(wal).size < thresholdBytes) await createMany(store, 10);
      const looks = store.checkpointWorker.walLooks;
      await createMany(store, 16);
      assert.ok(store.checkpointWorker.walLooks > looks);
      assert.equal(store.checkpointWorker.running, true, 'a full WAL starts the worker');
    } finally {
      await store.close();
    }
    // Reopened after a clean close: the WAL was emptied at close, so no worker.
    const again = new SqliteTaskStore(path);
    assert.equal(again.checkpointWorker.running, false);
    await again.close();
  });

  for (const count of [50, 600]) {
    it(`close() leaves an empty WAL and every row (${count} writes)`, async () => {
      const path = freshPath();
      const store = new SqliteTaskStore(path);
      await createMany(store, count);
      // 50 writes stay below a checkpoint's worth (SQLite checkpoints them as it closes); 600
      // start the worker, and close() waits for it to end.
      if (count === 600) await waitFor('the worker to start', () => store.checkpointWorker.running);
      else assert.equal(store.checkpointWorker.running, false);
      await store.close();
      assert.equal(store.checkpointWorker.running, false);
      // The last connection to close removes a fully checkpointed WAL.
      assert.ok(!existsSync(`${path}-wal`) || statSync(`${path}-wal`).size === 0);
      assert.equal(rowsInFile(path), count);
    });
  }

  for (const tree of ['.build', 'dist'] as const) {
    it(`a process using the store (${tree}) ends by itself, with or without close()`, async () => {
      const built = fileURLToPath(new URL('../../src/stores/sqlite/index.js', import.meta.url));
      const entry =
        tree === '.build' ? built : join(built, '../../../../../dist/stores/sqlite/index.js');
      const recordEntry = join(entry, '../../../task/record.js');
      for (const closes of [true, false]) {
        const script =
          `const { SqliteTaskStore } = await import(${JSON.stringify(pathToFileURL(entry).href)});` +
          `const store = new SqliteTaskStore(${JSON.stringify(freshPath())});` +
          `const { newTaskRecord } = await import(${JSON.stringify(pathToFileURL(recordEntry).href)});` +
          `const started = Date.now();` +
          // Writes until the WAL holds a checkpoint's worth and the worker thread runs.
          `for (let i = 0; !store.checkpointWorker.running; i += 1) {` +
          `  if (Date.now() - started > 10000) throw new Error('no worker');` +
          `  await store.create(newTaskRecord({ id: 'child-task-' + i, principal: 'p', tool: 't', arguments: { pad: 'x'.repeat(4000) }, ttlMs: null, pollIntervalMs: 100 }, Date.now()));` +
          `}` +
          (closes ? `await store.close(); console.log('closed');` : `console.log('left open');`);
        const file = join(dir.path, `child-${++counter}.mjs`);
        writeFileSync(file, script);
        const { code, stdout, stderr } = await runNode(file, []);
        assert.equal(code, 0, stdout + stderr);
        assert.equal(stdout.trim(), closes ? 'closed' : 'left open');
      }
    });
  }
});

describe('sqlite: without its worker, checkpoints fall back to SQLite', () => {
  /** A write on the serving connection, told to the checkpointer as the store tells it. */
  function commit(db: Database.Database, checkpointer: Checkpointer, value: string): void {
    for (let i = 0; i < COMMITS_PER_LOOK; i += 1) {
      db.prepare('INSERT INTO t VALUES (?)').run(value);
      checkpointer.committed();
    }
  }

  function serving(path: string): Database.Database {
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE IF NOT EXISTS t (v TEXT)');
    return db;
  }

  it('warns once and turns the automatic checkpoint back on when the worker cannot start', async () => {
    const path = freshPath();
    const db = serving(path);
    const warnings: string[] = [];
    const checkpointer = new Checkpointer(db, path, {
      warn: (message) => warnings.push(message),
      workerUrl: pathToFileURL(join(dir.path, 'missing-worker.js')),
      thresholdFrames: 1,
    });
    commit(db, checkpointer, 'a WAL of one frame starts the worker');
    await waitFor('the fallback', () => warnings.length > 0);
    assert.equal(checkpointer.running, false);
    assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), AUTOCHECKPOINT_FRAMES);
    await checkpointer.close();
    assert.equal(warnings.length, 1, warnings.join('\n'));
    assert.match(warnings[0] ?? '', /checkpoint worker stopped/);
    db.close();
  });

  it('warns once and turns the automatic checkpoint back on when the worker dies', async () => {
    const path = freshPath();
    const db = serving(path);
    const dies = join(dir.path, 'dies.mjs');
    writeFileSync(dies, 'setTimeout(() => process.exit(3), 20);\n');
    const warnings: string[] = [];
    const checkpointer = new Checkpointer(db, path, {
      warn: (message) => warnings.push(message),
      workerUrl: pathToFileURL(dies),
      thresholdFrames: 1,
    });
    assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), 0);
    commit(db, checkpointer, 'a WAL of one frame starts the worker');
    await waitFor('the fallback', () => warnings.length > 0);
    assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), AUTOCHECKPOINT_FRAMES);
    assert.match(warnings[0] ?? '', /exited with code 3/);
    db.prepare('INSERT INTO t VALUES (?)').run('still writable');
    await checkpointer.close();
    assert.equal(warnings.length, 1, warnings.join('\n'));
    db.close();
  });
});
