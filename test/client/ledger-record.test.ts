import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { Ledger, type LedgerEntry } from '../../src/client/index.js';
import { tempDir } from './support.js';

type NewEntry = Omit<LedgerEntry, 'createdAt' | 'updatedAt' | 'answeredKeys'>;

const plain: NewEntry = {
  id: 'plain',
  server: 'http://127.0.0.1:1/mcp',
  tool: 'slow',
  arguments: {},
  status: 'working',
  pollIntervalMs: 1000,
  nextPollAt: 5,
  ttlMs: null,
};

const everyField: NewEntry = {
  id: 'every-field',
  server: 'http://127.0.0.1:1/mcp',
  tool: 'ask',
  arguments: { text: 'héllo', nested: { list: [1, 2.5, null, true] } },
  status: 'input_required',
  statusMessage: 'waiting for you',
  pollIntervalMs: 250,
  nextPollAt: 1_733_000_000_000,
  ttlMs: 60_000,
  outputSchema: { type: 'object', properties: { n: { type: 'number' } } },
  bearer: 'secret-token',
  ownerPid: 4242,
  protocolVersion: '2025-11-25',
};

describe('Ledger.record', () => {
  const dir = tempDir('ledger-record');
  after(() => dir.remove());

  it('hands back the entry a read of the row gives, without sharing the caller’s objects', () => {
    const ledger = Ledger.open(dir.path, () => 1_000);
    try {
      for (const entry of [plain, everyField]) {
        const recorded = ledger.record(entry);
        assert.deepEqual(recorded, ledger.require(entry.id));
        assert.notEqual(recorded.arguments, entry.arguments);
        if (entry.outputSchema !== undefined)
          assert.notEqual(recorded.outputSchema, entry.outputSchema);
      }
    } finally {
      ledger.close();
    }
  });

  it('keeps the first record of an id and hands that back to a second one', () => {
    let now = 1_000;
    const ledger = Ledger.open(dir.path, () => now);
    try {
      const first = ledger.record({ ...plain, id: 'twice' });
      now = 2_000;
      const second = ledger.record({ ...plain, id: 'twice', tool: 'other', arguments: { a: 1 } });
      assert.deepEqual(second, first);
      assert.equal(second.tool, 'slow');
      assert.equal(second.createdAt, 1_000);
    } finally {
      ledger.close();
    }
  });

  it('drops the status index of older ledgers, which no query used and every write paid for', () => {
    const home = join(dir.path, 'older');
    Ledger.open(home).close();
    const raw = new Database(join(home, 'ledger.db'));
    raw.exec('CREATE INDEX tasks_by_status ON tasks (status)');
    raw.close();
    Ledger.open(home).close();
    const reopened = new Database(join(home, 'ledger.db'), { readonly: true });
    try {
      const indexes = reopened
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'tasks'")
        .all() as { name: string }[];
      assert.deepEqual(
        indexes.map((index) => index.name),
        ['sqlite_autoindex_tasks_1'],
      );
    } finally {
      reopened.close();
    }
  });
});
