/**
 * Fair share across `taskrail worker` processes (Redis + BullMQ, PostgreSQL + graphile-worker):
 * a `serve --no-worker` replica with `--auth tokens:FILE` takes the creates of two principals,
 * workers with 2 slots each run them; the run order comes from the journal the tool writes.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import type { RawDispatch } from '../../src/client/rpc-http.js';
import { parseJournal } from '../fixtures/policy-tools.js';
import type { Child } from './child.js';
import { createTask, dispatchTo } from './deployment.js';
import { startServing, startWorker } from './taskrail.js';
import { waitFor } from './wait.js';

const TOOLS = '.build/test/fixtures/policy-tools-module.js';
const SLOTS_PER_WORKER = 2;

export interface FairDeployment {
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function registerFairBacklogScenario(url: string, workers: number): FairDeployment {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-fair-e2e-'));
  const journal = join(dir, 'journal.log');
  const tokens = join(dir, 'tokens.json');
  writeFileSync(tokens, JSON.stringify({ 'tok-a': 'alice', 'tok-b': 'bob' }));
  const children: Child[] = [];
  let serveUrl = '';
  const common = ['--store', url, '--tools', TOOLS, '--log-level', 'warn'];
  const env = { TASKRAIL_E2E_LOG: journal };
  const as = (token: string): RawDispatch =>
    dispatchTo(serveUrl, { authorization: `Bearer ${token}` });
  const starts = (): string[] =>
    parseJournal(existsSync(journal) ? readFileSync(journal, 'utf8') : '')
      .filter((entry) => entry.event === 'busy-start')
      .map((entry) => entry.taskId);

  it(`one principal's backlog of 80 delays another's task by at most one run per slot (${workers} worker(s))`, async () => {
    const alice = as('tok-a');
    const aliceIds: string[] = [];
    for (let batch = 0; batch < 8; batch++) {
      const ids = await Promise.all(
        Array.from({ length: 10 }, () => createTask(alice, 'busy', { ms: 250 })),
      );
      aliceIds.push(...ids);
    }
    // Counted from when bob's create is answered (his task exists): runs that start while his
    // request is still on its way are not his delay (at load 8+ that was up to a second of runs).
    const bob = await createTask(as('tok-b'), 'busy', { ms: 10 });
    const bobCreated = Date.now();
    const before = new Set(starts());
    await waitFor('bob to start', () => starts().includes(bob), { timeoutMs: 90_000 });
    const order = starts();
    const ahead = order.slice(0, order.indexOf(bob)).filter((id) => !before.has(id));
    const unstarted = aliceIds.filter((id) => !order.includes(id)).length;
    const slots = workers * SLOTS_PER_WORKER;
    process.stdout.write(
      `# ${workers} worker(s), ${slots} slots: alice runs started between bob's create and bob's start: ${ahead.length}; alice still waiting: ${unstarted}\n`,
    );
    assert.ok(unstarted >= 20, `a real backlog was waiting (${unstarted} of alice's tasks)`);
    if (ahead.length > slots) process.stdout.write(whatHappened(bob, bobCreated));
    assert.ok(ahead.length <= slots, `${ahead.length} of alice's runs went first (${slots} slots)`);
  });

  /** The starts around bob's (ms from his create's answer) and each process's warnings. */
  const whatHappened = (bob: string, bobCreated: number): string => {
    const entries = parseJournal(readFileSync(journal, 'utf8'));
    const lines = entries
      .filter((entry) => entry.at >= bobCreated - 1000)
      .map(
        (entry) =>
          `${entry.at - bobCreated} ms ${entry.event} ${entry.taskId === bob ? 'BOB' : entry.taskId}`,
      );
    const logs = children.map((child, i) => `process ${i} stderr:\n${child.stderr().slice(-4000)}`);
    return [...lines, ...logs].map((line) => `# ${line}\n`).join('');
  };

  return {
    async start() {
      const serving = await startServing(
        ['serve', '--no-worker', '--port', '0', ...common, '--auth', `tokens:${tokens}`],
        { env },
      );
      children.push(serving.child);
      serveUrl = serving.url;
      for (let i = 0; i < workers; i++) {
        const args = ['--concurrency', String(SLOTS_PER_WORKER), ...common];
        children.push(await startWorker(args, { env }));
      }
    },
    async stop() {
      await Promise.all(children.map((child) => child.stop(30_000)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
