import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Child } from '../helpers/child.js';
import { startServing } from '../helpers/taskrail.js';
import { waitFor } from '../helpers/wait.js';
import { getTask } from '../server/support.js';
import { callAsTask, CLI, textOf, waitForTask } from './support.js';

const UPSTREAM = fileURLToPath(new URL('./fixtures/stalling-upstream.js', import.meta.url));
const ALICE = { bearer: 'tok-a' };
const BOB = { bearer: 'tok-b' };

/**
 * Issue #28: one principal's calls that never end (an upstream that never answers, a question
 * nobody answers) held every upstream slot, and another principal's task stayed `working`.
 * With `--upstream-concurrency 4`, a principal holds at most two while another asks.
 */
/** `taskrail proxy --auth tokens:FILE --upstream-concurrency 4` before the stalling upstream. */
async function startFairProxy(
  dir: string,
  journal: string,
): Promise<{ child: Child; url: string }> {
  const tokens = join(dir, 'tokens.json');
  writeFileSync(tokens, JSON.stringify({ 'tok-a': 'alice', 'tok-b': 'bob' }));
  const args = ['proxy', '--port', '0', '--store', 'memory:', '--log-level', 'error'];
  args.push('--auth', `tokens:${tokens}`, '--upstream-concurrency', '4');
  return startServing([...args, '--', process.execPath, UPSTREAM], {
    main: CLI,
    env: { JOURNAL: journal },
  });
}

function reached(journal: string, tool: string, caller: string): number {
  if (!existsSync(journal)) return 0;
  const lines = readFileSync(journal, 'utf8').split('\n');
  return lines.filter((line) => line === `${tool} ${caller}`).length;
}

/**
 * Issue #28: one principal's calls that never end (an upstream that never answers, a question
 * nobody answers) held every upstream slot, and another principal's task stayed `working`.
 * With `--upstream-concurrency 4`, a principal holds at most two while another asks.
 */
for (const tool of ['stall', 'ask']) {
  describe(`taskrail proxy: upstream slots shared fairly (${tool})`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'taskrail-fair-upstream-'));
    const journal = join(dir, 'journal');
    let proxy: Child;
    let url = '';
    before(async () => ({ child: proxy, url } = await startFairProxy(dir, journal)));
    after(async () => {
      await proxy?.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    });

    it(`runs another principal's call while one principal's ${tool} calls hold their half`, async () => {
      const held = [];
      for (let i = 0; i < 4; i++)
        held.push(await callAsTask(url, tool, { caller: 'alice' }, ALICE));
      await waitFor(
        'two of alice’s calls reach the upstream',
        () => reached(journal, tool, 'alice') === 2,
      );
      if (tool === 'ask') {
        // Parked: a question nobody answers still holds its upstream connection.
        await waitForTask(url, held[0] as string, ['input_required'], 30_000, ALICE);
        await waitForTask(url, held[1] as string, ['input_required'], 30_000, ALICE);
      }
      const bobs = await callAsTask(url, 'echo', { caller: 'bob' }, BOB);
      const done = await waitForTask(url, bobs, ['completed', 'failed'], 30_000, BOB);
      assert.equal(textOf(done), 'echo bob');
      assert.equal(reached(journal, tool, 'alice'), 2, 'alice still holds only her half');
      const waiting = await getTask(url, held[3] as string, ALICE);
      assert.equal(waiting['status'], 'working', 'her fourth call waits for one of her slots');
      console.log(`# upstream (${tool}): alice 2 of 4 calls hold slots; bob's echo completed`);
    });
  });
}
