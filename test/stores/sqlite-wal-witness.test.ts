import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { ReadCache } from '../../src/stores/sqlite/read-cache.js';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import { WalIndexWitness } from '../../src/stores/sqlite/wal-index.js';
import { tempDir } from './temp-dir.js';

const dir = tempDir();
after(() => dir.remove());
let counter = 0;

/** A WAL database with one table, and a second connection to it. */
function walFile() {
  const path = join(dir.path, `witness-${++counter}.db`);
  const mine = new Database(path);
  mine.pragma('journal_mode = WAL');
  mine.exec('CREATE TABLE t (v INTEGER)');
  const other = new Database(path);
  const insert = (db: Database.Database) => db.prepare('INSERT INTO t VALUES (1)').run();
  return { path, mine, other, insert, close: () => (other.close(), mine.close()) };
}

describe('WalIndexWitness', () => {
  it('says unchanged only while no connection commits', () => {
    const file = walFile();
    const witness = WalIndexWitness.open(file.path);
    try {
      assert.ok(witness !== undefined, 'a WAL file has a wal-index');
      assert.equal(witness.unchanged(), false, 'nothing remembered yet');
      witness.remember();
      assert.equal(witness.unchanged(), true);
      file.mine.prepare('SELECT count(*) FROM t').get();
      assert.equal(witness.unchanged(), true, 'a read is not a commit');

      file.insert(file.other);
      assert.equal(witness.unchanged(), false, 'another connection committed');
      witness.remember();
      assert.equal(witness.unchanged(), true);
      file.insert(file.mine);
      assert.equal(witness.unchanged(), false, 'our own commit changes it too');
    } finally {
      witness?.close();
      file.close();
    }
  });

  it('is not offered without a wal-index to read', () => {
    const rollback = join(dir.path, 'rollback.db');
    new Database(rollback).exec('CREATE TABLE t (v INTEGER)');
    assert.equal(WalIndexWitness.open(rollback), undefined, 'no -shm file');
    const fake = join(dir.path, 'fake.db');
    writeFileSync(`${fake}-shm`, Buffer.alloc(4096, 7));
    assert.equal(WalIndexWitness.open(fake), undefined, 'a -shm file that is no wal-index');
  });
});

describe('ReadCache with a witness', () => {
  it('reads the data version only after a commit, and still empties on another’s commit', () => {
    const file = walFile();
    const dataVersion = file.mine.prepare('PRAGMA data_version').pluck();
    let versionReads = 0;
    const cache = new ReadCache(
      () => (versionReads++, dataVersion.get()),
      10,
      WalIndexWitness.open(file.path),
    );
    try {
      cache.validate();
      cache.put('a', ['row a']);
      for (let i = 0; i < 100; i++) cache.validate();
      assert.equal(versionReads, 1, 'no commit: the header alone vouched');
      assert.deepEqual(cache.get('a'), ['row a']);

      file.insert(file.mine);
      cache.validate();
      assert.equal(versionReads, 2, 'after our own commit: one precise check');
      assert.deepEqual(cache.get('a'), ['row a'], 'our own commit keeps the cache');

      file.insert(file.other);
      cache.validate();
      assert.equal(versionReads, 3);
      assert.equal(cache.get('a'), undefined, 'another connection committed: emptied');
    } finally {
      cache.close();
      file.close();
    }
  });
});

/** Whether another OS process can take the file's write lock right now (no waiting). */
function otherProcessCanWrite(path: string): boolean {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const script =
    `const Database = require(${JSON.stringify(driver)});` +
    `const db = new Database(${JSON.stringify(path)}); db.pragma('busy_timeout = 0');` +
    `try { db.exec('BEGIN IMMEDIATE'); db.exec('ROLLBACK'); console.log('free'); }` +
    `catch (error) { console.log(error.code); }`;
  const answer = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }).trim();
  assert.match(answer, /^(free|SQLITE_BUSY)$/);
  return answer === 'free';
}

describe('the witness and the locks SQLite holds in this process', () => {
  it('closing one store leaves another connection’s write lock on the file in place', async () => {
    // POSIX drops every lock a process holds on a file when it closes any descriptor of it:
    // a store closing its own -shm descriptor let another process write the WAL alongside a
    // connection of ours (the checkpoint thread), and commits were lost (sqlite-files test).
    const path = join(dir.path, `locks-${++counter}.db`);
    const serving = new SqliteTaskStore(path);
    const writer = new Database(path);
    try {
      writer.pragma('busy_timeout = 0');
      writer.exec('BEGIN IMMEDIATE');
      assert.equal(otherProcessCanWrite(path), false, 'our connection holds the write lock');
      await new SqliteTaskStore(path).close();
      assert.equal(otherProcessCanWrite(path), false, 'still held after a store closed');
      writer.exec('ROLLBACK');
    } finally {
      writer.close();
      await serving.close();
    }
  });
});
