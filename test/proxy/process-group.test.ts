import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startNode } from '../helpers/child.js';
import { waitFor } from '../helpers/wait.js';
import { callAsTask, CLI, waitForTask } from './support.js';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const LAUNCHER = fixture('launcher.js');
const UPSTREAM = fixture('giving-up-upstream.js');

/** Alive and not a zombie (an orphaned zombie may wait long for a reaper in a container). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

describe('taskrail proxy -- COMMAND: the upstream process group', () => {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-proxy-group-'));
  const pidFile = join(dir, 'pids');
  const pids = () =>
    existsSync(pidFile)
      ? readFileSync(pidFile, 'utf8').split('\n').filter(Boolean).map(Number)
      : [];
  after(() => {
    for (const pid of pids()) if (running(pid)) process.kill(pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('says what it waits for while the upstream starts, and stops the grandchild on SIGTERM', async () => {
    const gate = join(dir, 'fetched');
    const proxy = startNode(
      CLI,
      [
        'proxy',
        '--store',
        `sqlite:${join(dir, 'tasks.db')}`,
        '--port',
        '0',
        '--log-format',
        'text',
        '--',
        process.execPath,
        LAUNCHER,
        UPSTREAM,
      ],
      { PID_FILE: pidFile, LAUNCH_GATE: gate },
    );
    try {
      // The launcher (npx) is still "fetching": the wait is named, with its bound.
      await waitFor(
        'the proxy to say what it waits for',
        () =>
          /starting upstream: .*launcher\.js.*waiting up to 60 s/.test(proxy.stderr())
            ? true
            : undefined,
        { timeoutMs: 30_000, intervalMs: 50 },
      );
      assert.equal(proxy.lines.length, 0, 'not ready yet');
      writeFileSync(gate, '');
      const url = (await proxy.line(/taskrail serving (\S+)/, 30_000))[1] as string;
      // A call starts one more upstream (each call has a connection of its own).
      const taskId = await callAsTask(url, 'echo', { text: 'hi' });
      await waitForTask(url, taskId, ['completed']);
      assert.ok(pids().length >= 2, `upstream servers started: ${pids().join(', ')}`);
      assert.ok(pids().every(running));
    } finally {
      await proxy.kill('SIGTERM');
    }
    assert.equal(proxy.process.exitCode, 0, proxy.stderr());
    await waitFor(
      'every upstream server (a grandchild of the proxy) to end',
      () => (pids().some(running) ? undefined : true),
      { timeoutMs: 15_000, intervalMs: 50 },
    );
  });
});
