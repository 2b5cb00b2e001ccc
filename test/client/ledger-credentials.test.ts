import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Ledger } from '../../src/client/index.js';
import { runCli, startServe, tempDir, type Serve } from './support.js';

/**
 * Issue 30 item 1: a server gives another principal the same "not found" as a task that never
 * existed, so a not-found under other credentials must not mark the ledger entry lost.
 */
describe('a not-found under other credentials is not a lost task', () => {
  const dir = tempDir('creds');
  const tokens = join(dir.path, 'tokens.json');
  let serve: Serve;
  const alice = { TASKRAIL_BEARER: 'alice-token' };
  const bob = { TASKRAIL_BEARER: 'bob-token' };

  before(async () => {
    writeFileSync(tokens, JSON.stringify({ 'alice-token': 'alice', 'bob-token': 'bob' }));
    serve = await startServe(dir.path, ['--auth', `tokens:${tokens}`]);
  });
  after(async () => {
    await serve.stop();
    dir.remove();
  });

  async function aliceTask(home: string, seconds = 60): Promise<string> {
    const created = await runCli(
      ['call', serve.url, 'slow_compute', '--args', JSON.stringify({ seconds }), '--detach'],
      home,
      alice,
    );
    assert.equal(created.code, 0, created.stderr);
    return created.stdout.trim();
  }

  function ledgerStatus(home: string, id: string): string {
    const ledger = Ledger.open(home);
    try {
      return ledger.require(id).status;
    } finally {
      ledger.close();
    }
  }

  it("tasks cancel and wait with bob's token say so, exit 4 and leave alice's task alone", async () => {
    const home = join(dir.path, 'h-bob');
    const id = await aliceTask(home);
    for (const command of ['cancel', 'wait']) {
      const r = await runCli(['tasks', command, id], home, bob);
      assert.equal(r.code, 4, `${command}: ${r.stderr}`);
      assert.match(r.stderr, /does not know task \S+ under these credentials/, r.stderr);
      assert.doesNotMatch(r.stdout + r.stderr, /\blost\b/);
      assert.equal(ledgerStatus(home, id), 'working', `${command} changed the ledger`);
    }
    // The saved token (the creator's) still reaches the task: it was never lost.
    const own = await runCli(['tasks', 'cancel', id], home, { TASKRAIL_BEARER: '' });
    assert.equal(own.code, 3, own.stderr);
    assert.equal(ledgerStatus(home, id), 'cancelled');
  });

  it('tasks resume still takes the task after a stranger looked, with the saved token', async () => {
    const home = join(dir.path, 'h-resume');
    const id = await aliceTask(home, 1);
    const looked = await runCli(['tasks', 'wait', id], home, bob);
    assert.equal(looked.code, 4, looked.stderr);
    const resumed = await runCli(['tasks', 'resume', '--all'], home, { TASKRAIL_BEARER: '' });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stdout, new RegExp(`^${id} completed`, 'm'));
    assert.equal(ledgerStatus(home, id), 'completed');
  });

  it('the same credentials getting not-found still mark the task lost', async () => {
    const home = join(dir.path, 'h-lost');
    const ledger = Ledger.open(home);
    ledger.record({
      id: 'BBBBBBBBBBBBBBBBBBBBBBBB',
      server: serve.url,
      tool: 'slow_compute',
      arguments: {},
      status: 'working',
      pollIntervalMs: 100,
      nextPollAt: 0,
      ttlMs: null,
      bearer: 'alice-token',
    });
    ledger.close();
    const r = await runCli(['tasks', 'wait', 'BBBBBBBBBBBBBBBBBBBBBBBB'], home, alice);
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stderr, /lost/);
    assert.equal(ledgerStatus(home, 'BBBBBBBBBBBBBBBBBBBBBBBB'), 'lost');
  });
});
