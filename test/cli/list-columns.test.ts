import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Ledger } from '../../src/client/index.js';
import { runCli, startServe, tempDir, type Serve } from '../client/support.js';

/** Where each column starts in a line of two-or-more-space separated cells. */
function columnStarts(line: string): number[] {
  return [...line.matchAll(/(?:^|\s{2,})(\S)/g)].map((m) => (m.index ?? 0) + m[0].length - 1);
}

/** Issue 30 item 8: aligned columns, and no stale progress line on a completed task. */
describe('tools and tasks list read as tables', () => {
  const dir = tempDir('columns');
  let serve: Serve;

  before(async () => {
    serve = await startServe(dir.path);
  });
  after(async () => {
    await serve.stop();
    dir.remove();
  });

  it('tools: the mode and description columns start at the same place on every line', async () => {
    const r = await runCli(['tools', serve.url], join(dir.path, 'h-tools'));
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trimEnd().split('\n');
    assert.ok(lines.length > 3, r.stdout);
    const starts = lines.map((line) => columnStarts(line).slice(0, 3).join(','));
    assert.equal(new Set(starts).size, 1, r.stdout);
  });

  it('tasks list: columns line up under the header, each line starts with the full id', async () => {
    const home = join(dir.path, 'h-list');
    for (const tool of ['greet', 'slow_compute']) {
      const args = tool === 'greet' ? '{"name":"Ada"}' : '{"seconds":0.2,"label":"sum"}';
      const done = await runCli(['call', serve.url, tool, '--args', args], home);
      assert.equal(done.code, 0, done.stderr);
    }
    const detached = await runCli(
      ['call', serve.url, 'confirm_delete', '--args', '{"filename":"a.txt"}', '--detach'],
      home,
    );
    assert.equal(detached.code, 0, detached.stderr);
    const r = await runCli(['tasks', 'list'], home);
    assert.equal(r.code, 0, r.stderr);
    const [header, ...rows] = r.stdout.trimEnd().split('\n');
    const headerStarts = columnStarts(header ?? '');
    assert.equal(headerStarts.length, 6, header);
    const ledger = Ledger.open(home);
    const ids = ledger.list().map((entry) => entry.id);
    ledger.close();
    assert.equal(rows.length, ids.length, r.stdout);
    rows.forEach((row, i) => {
      assert.ok(row.startsWith(`${ids[i]} `), row);
      for (const start of headerStarts.slice(1, 5)) assert.match(row[start - 1] ?? '', /\s/, row);
      assert.match(row.slice(headerStarts[1]), /^\S/, row);
    });
  });

  it('a completed task shows no stale progress message, in the list or the ledger', async () => {
    const home = join(dir.path, 'h-stale');
    const done = await runCli(
      ['call', serve.url, 'slow_compute', '--args', '{"seconds":1,"label":"sum"}'],
      home,
    );
    assert.equal(done.code, 0, done.stderr);
    const ledger = Ledger.open(home);
    const [entry] = ledger.list();
    ledger.close();
    assert.equal(entry?.status, 'completed');
    assert.equal(entry?.statusMessage, undefined);
    const r = await runCli(['tasks', 'list'], home);
    assert.doesNotMatch(r.stdout, /computing/, r.stdout);
  });
});
