import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { rpc } from '../server/support.js';
import {
  callAsTask,
  startInProcess,
  textOf,
  waitForTask,
  type RunningProxyServer,
} from './support.js';

const UPSTREAM = fileURLToPath(new URL('./fixtures/giving-up-upstream.js', import.meta.url));

/**
 * server-everything's question times out on its own side after 60 s and it goes on with a
 * default; the fixture does the same after 2 s. The task must stop asking, say why, and refuse
 * a late answer instead of taking it for one the upstream used.
 */
describe('proxy: a question the upstream withdraws', () => {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-withdrawn-'));
  const gate = join(dir, 'return');
  let proxy: RunningProxyServer;

  before(async () => {
    process.env['ASK_TIMEOUT_MS'] = '2000';
    process.env['RETURN_GATE'] = gate; // the child gets the proxy's environment
    proxy = await startInProcess({
      upstream: { kind: 'stdio', command: process.execPath, args: [UPSTREAM] },
    });
  });
  after(async () => {
    await proxy.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('leaves input_required saying why, and refuses the late answer with -32602', async () => {
    const taskId = await callAsTask(proxy.url, 'ask_colour', {});
    const parked = await waitForTask(proxy.url, taskId, ['input_required']);
    const [key] = Object.keys(parked['inputRequests'] as object);
    assert.ok(key !== undefined);

    const moved = await waitForTask(proxy.url, taskId, ['working', 'completed', 'failed']);
    assert.equal(moved['status'], 'working', 'the upstream has not returned yet');
    assert.match(String(moved['statusMessage']), /withdrawn: the upstream stopped waiting for it/);

    const late = await rpc(proxy.url, 'tasks/update', {
      taskId,
      inputResponses: { [key]: { action: 'accept', content: { colour: 'blue' } } },
    });
    assert.equal(late.body.error?.code, -32602, JSON.stringify(late.body));
    assert.match(String(late.body.error?.message), /withdrawn before it was answered/);

    writeFileSync(gate, '');
    const done = await waitForTask(proxy.url, taskId, ['completed', 'failed']);
    assert.equal(done['status'], 'completed');
    assert.match(textOf(done), /default - elicitation unavailable/, 'the upstream’s own default');
    assert.doesNotMatch(textOf(done), /blue/);

    const afterEnd = await rpc(proxy.url, 'tasks/update', {
      taskId,
      inputResponses: { [key]: { action: 'accept', content: { colour: 'blue' } } },
    });
    assert.equal(afterEnd.body.error?.code, -32602, 'still refused once the task ended');
  });
});
