/**
 * Fair share's more-than-half rule across a fleet of `taskrail worker` processes (Redis +
 * BullMQ, PostgreSQL + graphile-worker): alice's backlog holds every slot behind a gate, bob
 * creates six tasks, the gate opens. From the journal the tool writes (in the order its lines
 * were appended, across processes): no principal starts a run while holding more than half of
 * the fleet's slots and the other principal has a task waiting; bob's first task starts within
 * one run per busy slot; once bob is done alice takes every slot again; every task ran once.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import type { RawDispatch } from '../../src/client/rpc-http.js';
import { parseJournal, type JournalEntry } from '../fixtures/policy-tools.js';
import type { Child } from './child.js';
import { createTask, dispatchTo, statusOn } from './deployment.js';
import { startServing, startWorker } from './taskrail.js';
import { waitFor } from './wait.js';

const TOOLS = '.build/test/fixtures/policy-tools-module.js';
const WORKERS = 2;
const SLOTS_PER_WORKER = 2;
const SLOTS = WORKERS * SLOTS_PER_WORKER;
const ALICE_TASKS = 28;
const BOB_TASKS = 6;
const RUN_MS = 150;

export interface HalfRuleDeployment {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** What the journal shows of the runs after the gate opened. */
interface Findings {
  /** Starts by a principal already running on more than half the slots while the other waited. */
  overHalf: string[];
  /** The most runs each principal held at once while the other had a task waiting. */
  mostWhileOtherWaits: Record<string, number>;
  /** Alice's starts after the gate opened and before bob's first start. */
  aliceBeforeBob: number;
  /** The most runs alice held at once after bob's last run ended. */
  aliceAfterBob: number;
}

export function registerHalfRuleScenario(url: string): HalfRuleDeployment {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-half-rule-'));
  const journal = join(dir, 'journal.log');
  const gate = join(dir, 'gate');
  const tokens = join(dir, 'tokens.json');
  writeFileSync(tokens, JSON.stringify({ 'tok-a': 'alice', 'tok-b': 'bob' }));
  const children: Child[] = [];
  let serveUrl = '';
  const as = (token: string): RawDispatch =>
    dispatchTo(serveUrl, { authorization: `Bearer ${token}` });
  const entries = (): JournalEntry[] =>
    parseJournal(existsSync(journal) ? readFileSync(journal, 'utf8') : '');
  const count = (event: string) => entries().filter((entry) => entry.event === event).length;
  const createMany = (who: RawDispatch, n: number) =>
    Promise.all(Array.from({ length: n }, () => createTask(who, 'gated', { gate, ms: RUN_MS })));

  it(`a principal running on more than half of ${SLOTS} slots gets no further slot while another's task waits`, async () => {
    const alice = as('tok-a');
    const aliceIds: string[] = [];
    for (let batch = 0; batch < ALICE_TASKS / 7; batch++)
      aliceIds.push(...(await createMany(alice, 7)));
    await waitFor('alice to hold every slot', () => count('gated-start') === SLOTS, {
      timeoutMs: 30_000,
    });
    const bobIds = await createMany(as('tok-b'), BOB_TASKS);
    // Every slot is held until the gate opens: each later start is decided with bob's queued.
    writeFileSync(gate, '');
    const all = [...aliceIds, ...bobIds];
    await waitFor('every run to end', () => count('gated-end') >= all.length, {
      timeoutMs: 120_000,
    });
    const bob = as('tok-b');
    for (const id of aliceIds) assert.equal(await statusOn(alice, id), 'completed');
    for (const id of bobIds) assert.equal(await statusOn(bob, id), 'completed');
    assertEachRanOnce(entries(), all);
    const found = analyse(entries(), new Set(bobIds));
    process.stdout.write(
      `# ${WORKERS} workers × ${SLOTS_PER_WORKER} slots: ${JSON.stringify(found)}\n`,
    );
    assert.deepEqual(found.overHalf, [], 'starts beyond half of the slots while another waited');
    assert.ok(found.aliceBeforeBob <= SLOTS, `${found.aliceBeforeBob} of alice's runs went first`);
    assert.equal(found.aliceAfterBob, SLOTS, 'alice alone again uses every slot');
  });

  return {
    async start() {
      const common = ['--store', url, '--tools', TOOLS, '--log-level', 'warn'];
      const env = { TASKRAIL_E2E_LOG: journal };
      const serveArgs = ['serve', '--no-worker', '--port', '0', ...common];
      const serving = await startServing([...serveArgs, '--auth', `tokens:${tokens}`], { env });
      children.push(serving.child);
      serveUrl = serving.url;
      for (let i = 0; i < WORKERS; i++) {
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

function assertEachRanOnce(journal: JournalEntry[], ids: string[]): void {
  for (const event of ['gated-start', 'gated-end']) {
    const seen = journal.filter((entry) => entry.event === event).map((entry) => entry.taskId);
    assert.deepEqual([...seen].sort(), [...ids].sort(), `each task has exactly one ${event}`);
  }
}

/** Replays the journal in append order: who ran, who waited, at every start after the gate. */
function analyse(journal: JournalEntry[], bobIds: Set<string>): Findings {
  const whose = (id: string) => (bobIds.has(id) ? 'bob' : 'alice');
  const running = { alice: 0, bob: 0 };
  const waiting = { alice: 0, bob: bobIds.size };
  const found: Findings = {
    overHalf: [],
    mostWhileOtherWaits: { alice: 0, bob: 0 },
    aliceBeforeBob: 0,
    aliceAfterBob: 0,
  };
  let starts = 0;
  let bobStarted = false;
  const events = journal.filter((entry) => entry.event.startsWith('gated-'));
  waiting.alice = events.filter((e) => e.event === 'gated-start').length - bobIds.size;
  for (const entry of events) {
    const who = whose(entry.taskId);
    const other = who === 'alice' ? 'bob' : 'alice';
    if (entry.event === 'gated-end') {
      running[who] -= 1;
      continue;
    }
    starts += 1;
    waiting[who] -= 1;
    const afterGate = starts > SLOTS;
    if (afterGate && waiting[other] > 0 && running[who] * 2 > SLOTS) {
      found.overHalf.push(`${who} started a run holding ${running[who]} of ${SLOTS}`);
    }
    running[who] += 1;
    if (waiting[other] > 0 && afterGate) {
      found.mostWhileOtherWaits[who] = Math.max(found.mostWhileOtherWaits[who] ?? 0, running[who]);
    }
    if (who === 'bob') bobStarted = true;
    else if (afterGate && !bobStarted) found.aliceBeforeBob += 1;
    if (who === 'alice' && waiting.bob === 0 && running.bob === 0) {
      found.aliceAfterBob = Math.max(found.aliceAfterBob, running.alice);
    }
  }
  return found;
}
