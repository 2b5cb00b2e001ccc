import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { runNode, type Child } from '../helpers/child.js';
import { startServing } from '../helpers/taskrail.js';
import { createTask, getTask, rpc, waitForStatus } from './support.js';

const MAIN = resolve('dist/cli/main.js');
function serve(args: string[]): Promise<{ child: Child; url: string }> {
  const serveArgs = ['serve', '--port', '0', '--log-level', 'warn', ...args];
  return startServing(serveArgs, { main: MAIN, timeoutMs: 15_000 });
}

describe('taskrail serve', () => {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-serve-'));
  const children: Child[] = [];
  after(async () => {
    for (const child of children) await child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('after SIGKILL and a restart on the same SQLite file, tasks/get answers as before', async () => {
    const store = `sqlite:${join(dir, 'tasks.db')}`;
    const first = await serve(['--store', store]);
    children.push(first.child);
    const done = await createTask(first.url, 'slow_compute', { seconds: 0.1 });
    const before = await waitForStatus(first.url, done, ['completed']);
    const parked = await createTask(first.url, 'confirm_delete', { filename: 'keep.txt' });
    await waitForStatus(first.url, parked, ['input_required']);
    await first.child.kill('SIGKILL');

    const second = await serve(['--store', store]);
    children.push(second.child);
    assert.deepEqual(await getTask(second.url, done), before);
    const stillParked = await getTask(second.url, parked);
    assert.equal(stillParked['status'], 'input_required');
    const key = Object.keys(stillParked['inputRequests'] as object)[0] as string;
    await rpc(second.url, 'tasks/update', {
      taskId: parked,
      inputResponses: { [key]: { action: 'accept', content: { confirm: true } } },
    });
    const finished = await waitForStatus(second.url, parked, ['completed']);
    assert.match(JSON.stringify(finished['result']), /Deleted keep\.txt/);
  });

  it('loads a user tools module (examples/custom-tools) and exits 0 on SIGTERM', async () => {
    const { child, url } = await serve([
      '--store',
      'memory:',
      '--tools',
      resolve('.build/examples/custom-tools.js'),
    ]);
    children.push(child);
    const taskId = await createTask(url, 'count_words', { text: 'one two\n\nthree' });
    const task = await waitForStatus(url, taskId, ['completed']);
    assert.match(JSON.stringify(task['result']), /3 words/);
    const exited = new Promise<number | null>((done) =>
      child.process.once('exit', (code) => done(code)),
    );
    child.process.kill('SIGTERM');
    assert.equal(await exited, 0);
  });

  it('usage errors exit 4 with a one-line message', async () => {
    const { code, stderr } = await runNode(MAIN, ['serve', '--store', 'bogus:x', '--port', '0']);
    assert.equal(code, 4);
    assert.match(stderr, /unknown store URL/);
  });

  it('--no-worker on a local store is a usage error (nothing else would run its tasks)', async () => {
    const args = ['serve', '--no-worker', '--store', 'memory:', '--port', '0'];
    const { code, stderr } = await runNode(MAIN, args);
    assert.equal(code, 4);
    assert.match(stderr, /--no-worker needs a redis:\/\/ or postgres:\/\/ store/);
  });
});
