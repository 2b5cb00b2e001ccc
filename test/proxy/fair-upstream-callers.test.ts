import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Child } from '../helpers/child.js';
import { startServing } from '../helpers/taskrail.js';
import { waitFor } from '../helpers/wait.js';
import { getTask, wire2026Post, type CallOptions } from '../server/support.js';
import { CLI, textOf, waitForTask } from './support.js';

const UPSTREAM = fileURLToPath(new URL('./fixtures/stalling-upstream.js', import.meta.url));

/**
 * Issue #36: without `--auth` every call counted on its own, so one caller's stalled and parked
 * calls took every upstream slot; with `--auth`, two principals at half each starved a third.
 * Now an anonymous caller is its connection (or session), and the last slot is kept for a
 * caller holding none.
 */
async function startProxy(dir: string, journal: string, auth: boolean) {
  const args = ['proxy', '--port', '0', '--store', 'memory:', '--log-level', 'error'];
  if (auth) {
    const tokens = join(dir, 'tokens.json');
    writeFileSync(tokens, JSON.stringify({ 'tok-a': 'alice', 'tok-b': 'bob', 'tok-c': 'carol' }));
    args.push('--auth', `tokens:${tokens}`);
  }
  args.push('--upstream-concurrency', '4');
  return startServing([...args, '--', process.execPath, UPSTREAM], {
    main: CLI,
    env: { JOURNAL: journal },
  });
}

/** A caller with one connection of its own (a keep-alive agent with one socket). */
function callerOn(url: string, options: CallOptions = {}) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const call = (name: string, caller: string): Promise<string> => {
    const { body, headers } = wire2026Post('tools/call', { name, arguments: { caller } }, options);
    return new Promise((resolve, reject) => {
      const req = request(url, { method: 'POST', agent, headers: Object.fromEntries(headers) });
      req.on('response', (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => {
          const taskId = (JSON.parse(text) as { result?: { taskId?: unknown } }).result?.taskId;
          if (typeof taskId === 'string') resolve(taskId);
          else reject(new Error(`no task: ${text}`));
        });
      });
      req.on('error', reject);
      req.end(body);
    });
  };
  return { call, close: () => agent.destroy() };
}

function reached(journal: string, tool: string, caller: string): number {
  if (!existsSync(journal)) return 0;
  const lines = readFileSync(journal, 'utf8').split('\n');
  return lines.filter((line) => line === `${tool} ${caller}`).length;
}

describe('taskrail proxy: upstream slots per caller', () => {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-fair-callers-'));
  const children: Child[] = [];
  after(async () => {
    for (const child of children) await child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  it('without --auth, one connection’s stalled calls hold half; another connection’s echo runs', async () => {
    const journal = join(dir, 'anonymous');
    const { child, url } = await startProxy(dir, journal, false);
    children.push(child);
    const first = callerOn(url);
    const second = callerOn(url);
    try {
      const held = [];
      for (let i = 0; i < 4; i++) held.push(await first.call('stall', 'first'));
      await waitFor('two of the first caller’s calls reach the upstream', () =>
        reached(journal, 'stall', 'first') >= 2 ? true : undefined,
      );
      const echo = await second.call('echo', 'second');
      const done = await waitForTask(url, echo, ['completed', 'failed'], 30_000);
      assert.equal(textOf(done), 'echo second');
      assert.equal(reached(journal, 'stall', 'first'), 2, 'the first caller holds only its half');
      assert.equal((await getTask(url, held[3] as string))['status'], 'working');
    } finally {
      first.close();
      second.close();
    }
  });

  it('with --auth, two principals at their share still leave a slot for a third', async () => {
    const journal = join(dir, 'principals');
    const { child, url } = await startProxy(dir, journal, true);
    children.push(child);
    const alice = callerOn(url, { bearer: 'tok-a' });
    const bob = callerOn(url, { bearer: 'tok-b' });
    const carol = callerOn(url, { bearer: 'tok-c' });
    try {
      for (let i = 0; i < 4; i++) await alice.call('stall', 'alice');
      await waitFor('alice’s half reaches the upstream', () =>
        reached(journal, 'stall', 'alice') >= 2 ? true : undefined,
      );
      for (let i = 0; i < 4; i++) await bob.call('stall', 'bob');
      await waitFor('bob’s call reaches the upstream', () =>
        reached(journal, 'stall', 'bob') >= 1 ? true : undefined,
      );
      const echo = await carol.call('echo', 'carol');
      const done = await waitForTask(url, echo, ['completed', 'failed'], 30_000, {
        bearer: 'tok-c',
      });
      assert.equal(textOf(done), 'echo carol');
      assert.equal(reached(journal, 'stall', 'bob'), 1, 'bob did not take the last slot');
    } finally {
      alice.close();
      bob.close();
      carol.close();
    }
  });
});
