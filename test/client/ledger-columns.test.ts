import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { Ledger } from '../../src/client/index.js';
import { tempDir } from './support.js';

/** The ledger as the first release wrote it: no protocol_version column. */
const FIRST_SCHEMA = `
CREATE TABLE tasks (
  id TEXT PRIMARY KEY, server TEXT NOT NULL, tool TEXT NOT NULL, arguments TEXT NOT NULL,
  status TEXT NOT NULL, status_message TEXT, poll_interval_ms INTEGER NOT NULL,
  next_poll_at INTEGER NOT NULL, ttl_ms INTEGER, input_requests TEXT,
  answered_keys TEXT NOT NULL DEFAULT '[]', outcome TEXT, result TEXT, error TEXT,
  output_schema TEXT, bearer TEXT, owner_pid INTEGER,
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL
);
INSERT INTO tasks (id, server, tool, arguments, status, poll_interval_ms, next_poll_at,
  created_at, updated_at) VALUES ('old-task', 'http://127.0.0.1:1/mcp', 'slow', '{}', 'working',
  1000, 0, 1, 1);
`;

describe('ledger file from before the protocol_version column', () => {
  const dir = tempDir('ledger-columns');
  after(() => dir.remove());

  it('gains the column on open; old rows read as 2026-07-28 tasks, new ones keep their wire', () => {
    const home = join(dir.path, 'home');
    mkdirSync(home);
    const db = new Database(join(home, 'ledger.db'));
    db.exec(FIRST_SCHEMA);
    db.close();
    const opened = [Ledger.open(home), Ledger.open(home)]; // a second opener finds it added
    const [ledger] = opened;
    assert.ok(ledger);
    assert.equal(ledger.require('old-task').protocolVersion, undefined);
    ledger.record({
      id: 'task-2025',
      server: 'http://127.0.0.1:1/mcp',
      tool: 'slow',
      arguments: {},
      status: 'working',
      pollIntervalMs: 100,
      nextPollAt: 0,
      ttlMs: null,
      protocolVersion: '2025-11-25',
    });
    assert.equal(opened[1]?.require('task-2025').protocolVersion, '2025-11-25');
    for (const each of opened) each.close();
  });
});
