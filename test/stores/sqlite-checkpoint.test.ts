import assert from 'node:assert/strict';
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import { AUTOCHECKPOINT_FRAMES, Checkpointer } from '../../src/stores/sqlite/checkpointer.js';
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

  it('starts no worker thread (~7 MiB) until the first write', async () => {
    const path = freshPath();
    const store = new SqliteTaskStore(path);
    try {
      // The schema written at open was checkpointed on the spot: nothing waits in the WAL.
      assert.equal(store.checkpointWorker.running, false);
      assert.ok(!existsSync(`${path}-wal`) || statSync(`${path}-wal`).size === 0);
      await store.get(newTaskId());
      assert.equal(store.checkpointWorker.running, false, 'a read starts no worker');
      await createMany(store, 1);
      await waitFor('the worker to start', () => store.checkpointWorker.running);
    } finally {
      await store.close();
    }
    // Reopened after a clean close: still no worker until a write.
    const again = new SqliteTaskStore(path);
    assert.equal(again.checkpointWorker.running, false);
    await again.close();
  });

  it('close() waits for the worker to end and leaves an empty WAL', async () => {
    const path = freshPath();
    const store = new SqliteTaskStore(path);
    await createMany(store, 50);
    await store.close();
    assert.equal(store.checkpointWorker.running, false);
    // The last connection to close removes a fully checkpointed WAL.
    assert.ok(!existsSync(`${path}-wal`) || statSync(`${path}-wal`).size === 0);
    assert.equal(rowsInFile(path), 50);
  });

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
          `await store.create(newTaskRecord({ id: 'child-task-1', principal: 'p', tool: 't', arguments: {}, ttlMs: null, pollIntervalMs: 100 }, Date.now()));` +
          `const started = Date.now();` +
          `while (!store.checkpointWorker.running) {` +
          `  if (Date.now() - started > 10000) throw new Error('no worker');` +
          `  await new Promise((resolve) => setTimeout(resolve, 20));` +
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
    });
    db.prepare('INSERT INTO t VALUES (?)').run('the first write starts the worker');
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
    });
    assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), 0);
    db.prepare('INSERT INTO t VALUES (?)').run('the first write starts the worker');
    await waitFor('the fallback', () => warnings.length > 0);
    assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), AUTOCHECKPOINT_FRAMES);
    assert.match(warnings[0] ?? '', /exited with code 3/);
    db.prepare('INSERT INTO t VALUES (?)').run('still writable');
    await checkpointer.close();
    assert.equal(warnings.length, 1, warnings.join('\n'));
    db.close();
  });
});
