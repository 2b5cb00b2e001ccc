import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { Ledger } from '../../src/client/index.js';
import { waitFor } from '../helpers/wait.js';
import { runCli, spawnCli, startServe, tempDir, type Serve } from './support.js';

describe('taskrail tasks resume and a shared ledger', () => {
  const dir = tempDir('resume');
  let serve: Serve;
  const home = (name: string): string => `${dir.path}/${name}`;

  before(async () => {
    serve = await startServe(dir.path);
  });
  after(async () => {
    await serve.stop();
    dir.remove();
  });

  it('call killed with SIGKILL after the task exists: tasks resume --all delivers the result', async () => {
    const h = home('kill');
    const child = spawnCli(
      ['call', serve.url, 'slow_compute', '--args', '{"seconds":1.5,"label":"crash"}'],
      h,
    );
    const ledger = Ledger.open(h);
    const entry = await waitFor('the task in the ledger', () => ledger.list()[0]);
    await child.kill('SIGKILL');
    assert.equal(ledger.require(entry.id).status, 'working');
    const r = await runCli(['tasks', 'resume', '--all'], h);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^${entry.id} completed slow_compute`, 'm'));
    const done = ledger.require(entry.id);
    assert.equal(done.status, 'completed');
    assert.match(JSON.stringify(done.result), /Finished crash after 1.5 second/);
    const again = await runCli(['tasks', 'resume'], h);
    assert.equal(again.code, 0);
    assert.equal(again.stdout, '', 'nothing left to resume');
    ledger.close();
  });

  it('resume exits 4 when a server cannot be reached', async () => {
    const h = home('down');
    const ledger = Ledger.open(h);
    ledger.record({
      id: 'unreachable-task-0000000000',
      server: 'http://127.0.0.1:9/mcp',
      tool: 'slow_compute',
      arguments: {},
      status: 'working',
      pollIntervalMs: 100,
      nextPollAt: 0,
      ttlMs: null,
    });
    ledger.close();
    const r = await runCli(['tasks', 'resume', '--all'], h);
    assert.equal(r.code, 4);
    assert.match(r.stdout, /^unreachable-task-0000000000 unreachable/m);
  });

  it('a task the server no longer knows is lost: tasks wait exits 4', async () => {
    const h = home('lost');
    const ledger = Ledger.open(h);
    ledger.record({
      id: 'AAAAAAAAAAAAAAAAAAAAAAAA',
      server: serve.url,
      tool: 'slow_compute',
      arguments: {},
      status: 'working',
      pollIntervalMs: 100,
      nextPollAt: 0,
      ttlMs: null,
    });
    const r = await runCli(['tasks', 'wait', 'AAAAAAAAAAAAAAAAAAAAAAAA'], h);
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stderr, /lost/);
    assert.equal(ledger.require('AAAAAAAAAAAAAAAAAAAAAAAA').status, 'lost');
    ledger.close();
  });

  it('several CLI processes share one ledger without corrupting it', async () => {
    const h = home('shared');
    const calls = Array.from({ length: 6 }, (_, i) =>
      runCli(
        [
          'call',
          serve.url,
          'slow_compute',
          '--args',
          JSON.stringify({ seconds: 0.3, label: `p${i}` }),
        ],
        h,
      ),
    );
    const lists = Array.from({ length: 4 }, () => runCli(['tasks', 'list'], h));
    const results = await Promise.all([...calls, ...lists]);
    for (const r of results) assert.equal(r.code, 0, r.stderr);
    const ledger = Ledger.open(h);
    const entries = ledger.list();
    ledger.close();
    assert.equal(entries.length, 6);
    assert.ok(entries.every((e) => e.status === 'completed'));
    assert.deepEqual(new Set(entries.map((e) => e.arguments.label)).size, 6);
    const db = new Database(`${h}/ledger.db`, { readonly: true });
    assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
    db.close();
  });
});
