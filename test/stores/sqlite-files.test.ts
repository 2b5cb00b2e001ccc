import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { SCHEMA_VERSION, SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import { recordToParams, TASK_COLUMNS, TASK_PARAMS } from '../../src/stores/sqlite/rows.js';
import { MIGRATIONS } from '../../src/stores/sqlite/schema.js';
import { newTaskId } from '../../src/task/ids.js';
import { newTaskRecord } from '../../src/task/record.js';
import { startNode } from '../helpers/child.js';
import { tempDir } from './temp-dir.js';

const dir = tempDir();
after(() => dir.remove());
let counter = 0;
const freshPath = (name = 'tasks.db') => join(dir.path, `case-${++counter}`, name);

const WRITER = fileURLToPath(new URL('./fixtures/sqlite-writer.js', import.meta.url));

interface WriterReport {
  won: string[];
  created: string[];
}

function startWriter(path: string, name: string, ids: string[], creates: number) {
  const child = startNode(WRITER, [path, name, JSON.stringify(ids), String(creates)]);
  const ready = child.line(/^ready$/, 60_000);
  const done = (async (): Promise<WriterReport> => {
    const [report] = await child.line(/^\{.*\}$/, 120_000);
    await child.exited;
    const code = child.process.exitCode;
    if (code !== 0) throw new Error(`${name} exited with ${code}: ${child.stderr()}`);
    return JSON.parse(report) as WriterReport;
  })();
  return { child, ready, done };
}

function record(principal = 'parent') {
  const input = {
    id: newTaskId(),
    principal,
    tool: 't',
    arguments: {},
    ttlMs: null,
    pollIntervalMs: 100,
  };
  return newTaskRecord(input, Date.now());
}

describe('SqliteTaskStore on real files', () => {
  it('several OS processes write one file: each transition has exactly one winner', async () => {
    const path = freshPath();
    const store = new SqliteTaskStore(path);
    const ids: string[] = [];
    for (let i = 0; i < 150; i++) ids.push((await store.create(record())).task.id);
    const names = ['writer-a', 'writer-b', 'writer-c'];
    const writers = names.map((name) => startWriter(path, name, ids, 150));
    let reports: WriterReport[];
    try {
      await Promise.all(writers.map((writer) => writer.ready));
      for (const writer of writers) writer.child.process.stdin!.write('go\n');
      reports = await Promise.all(writers.map((writer) => writer.done));
    } finally {
      // One writer failing must not leave the others waiting for "go" (the file would hang).
      await Promise.all(writers.map((writer) => writer.child.kill('SIGTERM')));
    }

    const won = reports.flatMap((report) => report.won);
    assert.equal(won.length, ids.length, 'every task completed exactly once');
    assert.deepEqual(new Set(won), new Set(ids));
    for (const [i, report] of reports.entries()) {
      for (const id of report.won.slice(0, 20)) {
        const task = await store.get(id);
        assert.equal(task?.status, 'completed');
        assert.deepEqual(task.result, { content: [{ type: 'text', text: names[i] }] });
        assert.equal(task.revision, 2);
      }
      const mine = await store.list({ principal: names[i], limit: 1000 });
      assert.deepEqual(new Set(mine.tasks.map((task) => task.id)), new Set(report.created));
      assert.equal(mine.tasks.length, 150);
    }
    await store.close();
  });

  it('opens a file while another process holds its write lock, and writes nothing to open it', async () => {
    const path = freshPath();
    await new SqliteTaskStore(path).close();
    // Another process (a serving taskrail) is inside a write transaction for 400 ms.
    const holder = startNode(
      '--input-type=module',
      [
        '-e',
        `import Database from 'better-sqlite3';` +
          `const db = new Database(${JSON.stringify(path)});` +
          `db.exec('BEGIN IMMEDIATE'); console.log('locked');` +
          `setTimeout(() => { db.exec('COMMIT'); db.close(); }, 400);`,
      ],
      {},
      { stdin: 'ignore', cwd: fileURLToPath(new URL('.', import.meta.url)) },
    );
    try {
      await holder.line(/locked/, 30_000);
      const store = new SqliteTaskStore(path);
      assert.equal(store.checkpointWorker.running, false, 'opening wrote nothing to the WAL');
      await store.create(record());
      await store.close();
    } finally {
      await holder.kill('SIGTERM');
    }
  });

  it('refuses a file that is not a SQLite database, with a clear error, and leaves it alone', () => {
    const path = freshPath();
    new SqliteTaskStore(path).close();
    const garbage = Buffer.from('this is not a database, just some bytes '.repeat(200));
    writeFileSync(path, garbage);
    assert.throws(
      () => new SqliteTaskStore(path),
      (error: Error & { code?: string }) => {
        assert.equal(error.name, 'TaskrailError');
        assert.equal(error.code, 'STORE_CORRUPT');
        assert.match(error.message, /not a SQLite database/);
        assert.ok(error.message.includes(path), 'names the file');
        assert.match(error.message, /move the file aside|another path/);
        return true;
      },
    );
    assert.deepEqual(readFileSync(path), garbage, 'the file is not modified');
  });

  it('explains a folder that cannot be created', () => {
    const blocker = freshPath('a-file');
    new SqliteTaskStore(join(blocker, '..', 'ok.db')).close(); // creates the folder
    writeFileSync(blocker, 'x');
    const path = join(blocker, 'sub', 'tasks.db');
    assert.throws(
      () => new SqliteTaskStore(path),
      (error: Error & { code?: string }) => {
        assert.equal(error.code, 'STORE_UNAVAILABLE');
        assert.match(error.message, /cannot create or write the folder/);
        assert.match(error.message, /--store/);
        return true;
      },
    );
  });

  it('fails at once, not forever, where the file system refuses a folder (procfs)', () => {
    // Node's recursive mkdir spins on /proc; the store must answer with an error instead.
    assert.throws(() => new SqliteTaskStore('/proc/taskrail-test/deeper/tasks.db'), {
      code: 'STORE_UNAVAILABLE',
      message: /cannot create or write the folder/,
    });
  });

  it('explains a path that is not a writable file', () => {
    const path = freshPath('folder.db');
    new SqliteTaskStore(join(path, 'inner.db')).close(); // makes `path` a folder
    assert.throws(
      () => new SqliteTaskStore(path),
      (error: Error & { code?: string }) => {
        assert.equal(error.code, 'STORE_UNAVAILABLE');
        assert.match(error.message, /not a writable file/);
        return true;
      },
    );
  });

  it('creates missing folders, uses WAL and records the migration version once', async () => {
    const path = freshPath('deep/er/tasks.db');
    await new SqliteTaskStore(path).close();
    await new SqliteTaskStore(path).close();
    const db = new Database(path, { readonly: true });
    try {
      assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
      assert.equal(db.pragma('user_version', { simple: true }), SCHEMA_VERSION);
      const versions = db.prepare('SELECT version FROM schema_migrations ORDER BY version').all();
      assert.deepEqual(
        versions,
        [1, 2, 3, 4, 5, 6].map((version) => ({ version })),
      );
      assert.equal(SCHEMA_VERSION, 6);
    } finally {
      db.close();
    }
  });

  it('migrates a version 1 file: leases move into the task rows, held ones stay held', async () => {
    const path = freshPath('schema-1.db');
    mkdirSync(dirname(path), { recursive: true });
    const held = newTaskRecord(
      { id: newTaskId(), principal: 'p', tool: 't', arguments: {}, ttlMs: null, pollIntervalMs: 1 },
      Date.now(),
    );
    const free = { ...held, id: newTaskId() };
    const schema1 = new Database(path);
    schema1.exec(
      'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL) STRICT;' +
        `${MIGRATIONS[0] as string};` +
        'INSERT INTO schema_migrations (version, applied_at) VALUES (1, 0);',
    );
    const insert = schema1.prepare(`INSERT INTO tasks (${TASK_COLUMNS}) VALUES (${TASK_PARAMS})`);
    for (const task of [held, free]) insert.run(recordToParams(task));
    schema1
      .prepare('INSERT INTO leases VALUES (?, ?, ?, ?)')
      .run(held.id, 'w1', 'token-1', Date.now() + 60_000);
    schema1.close();

    const store = new SqliteTaskStore(path);
    try {
      assert.equal(await store.claim(held.id, 'w2', 1000), undefined, 'still held');
      assert.equal((await store.renewLease(held.id, 'token-1', 1000)).held, true);
      assert.equal((await store.claim(free.id, 'w2', 1000))?.interrupted, false);
      assert.deepEqual(await store.get(held.id), held);
      assert.equal(await store.countUnfinished('p', 10), 2, 'migration 3 counted older tasks');
    } finally {
      await store.close();
    }
    const db = new Database(path, { readonly: true });
    try {
      const gone = db
        .prepare("SELECT name FROM sqlite_master WHERE name IN ('leases', 'tasks_by_tool')")
        .all();
      assert.deepEqual(gone, []);
    } finally {
      db.close();
    }
  });

  it('refuses a file written by a newer schema', () => {
    const path = freshPath();
    new SqliteTaskStore(path).close();
    const db = new Database(path);
    db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (99, 0)').run();
    db.close();
    assert.throws(() => new SqliteTaskStore(path), /schema version 99.*upgrade taskrail/);
  });

  it('reports use after close as STORE_UNAVAILABLE', async () => {
    const store = new SqliteTaskStore(freshPath());
    await store.close();
    await store.close();
    await assert.rejects(store.get('x'), { code: 'STORE_UNAVAILABLE' });
  });
});
