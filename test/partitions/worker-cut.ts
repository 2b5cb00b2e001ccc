/**
 * A worker cut off from its store, alone and beside a second worker. The promises checked are
 * the issue's: a `retry: false` tool never starts twice (it ends failed "interrupted" or
 * completes once), a `retry: true` task is re-run at most once per lost lease and keeps one
 * run's result, a cut-off worker stops the work it no longer owns before another worker takes
 * it over, its late outcome is not stored, it serves new tasks after the heal, and no process
 * logs an unhandled rejection.
 */
import assert from 'node:assert/strict';
import type { Child } from '../helpers/child.js';
import type { RelayMode, RelayOptions } from '../helpers/tcp-relay.js';
import { waitFor } from '../helpers/wait.js';
import {
  LEASE_MS,
  holdCut,
  printTimeline,
  resultText,
  type JournalLine,
  type PartitionKit,
} from './harness.js';

/**
 * The runs end inside the cut, past the lease, once a PostgreSQL pool's connections all hang
 * on renewals (a new query then waits 5 s and fails "timeout exceeded when trying to
 * connect"); the cut outlasts that failure.
 */
const ALONE_RUN_SECONDS = 6;
const ALONE_CUT_MS = 5 * LEASE_MS;
const TAKEOVER_MS = 45_000;

const starts = (lines: JournalLine[]) => lines.filter((line) => line.event === 'start');
const ended = (line: JournalLine) => line.event === 'done' || line.event === 'aborted';

async function startsOn(kit: PartitionKit, taskId: string, worker: Child): Promise<void> {
  await waitFor(
    `task ${taskId} to start on worker ${worker.process.pid}`,
    () => starts(kit.runsOf(taskId)).some((line) => line.pid === worker.process.pid),
    { timeoutMs: 30_000 },
  );
}

/** `retry: false`: started once; then completed by that run, or failed "interrupted". */
export async function assertRanAtMostOnce(kit: PartitionKit, taskId: string): Promise<void> {
  const task = await kit.settled(taskId);
  const runs = kit.runsOf(taskId);
  assert.equal(starts(runs).length, 1, `retry: false tool started ${JSON.stringify(runs)}`);
  if (task.status === 'completed') {
    assert.ok(
      runs.some((line) => line.event === 'done'),
      'completed by the run that finished',
    );
  } else {
    assert.equal(task.status, 'failed', `retry: false task ended ${task.status}`);
    assert.match(task.error?.message ?? '', /interrupt/i, JSON.stringify(task.error));
  }
  await assertOneTerminalWrite(kit, taskId);
}

/** `retry: true`: completed with the result of one run that finished, re-run at most once. */
async function assertKeptOneRun(kit: PartitionKit, taskId: string): Promise<JournalLine> {
  const task = await kit.settled(taskId);
  const runs = kit.runsOf(taskId);
  assert.equal(task.status, 'completed', `${JSON.stringify(task.error)} ${JSON.stringify(runs)}`);
  assert.ok(starts(runs).length <= 2, `one lost lease, ${starts(runs).length} runs`);
  const winner = runs.find(
    (line) =>
      line.event === 'done' && resultText(task) === `run of ${line.pid} attempt ${line.attempt}`,
  );
  assert.ok(winner, `result "${resultText(task)}" is no finished run's: ${JSON.stringify(runs)}`);
  await assertOneTerminalWrite(kit, taskId);
  return winner;
}

async function assertOneTerminalWrite(kit: PartitionKit, taskId: string): Promise<void> {
  await waitFor('the terminal write to be seen', () => kit.terminalWrites.get(taskId));
  assert.equal(kit.terminalWrites.get(taskId), 1, 'exactly one terminal write');
}

async function assertServesAfterHeal(kit: PartitionKit, worker: Child): Promise<void> {
  const quick = await kit.create('quick', {});
  const task = await kit.settled(quick, 30_000);
  assert.equal(task.status, 'completed', JSON.stringify(task.error));
  assert.equal(resultText(task), `quick by ${worker.process.pid}`);
}

export async function workerAloneCutOff(
  kit: PartitionKit,
  mode: RelayMode,
  relayOptions: RelayOptions = {},
): Promise<void> {
  const relay = await kit.relay(relayOptions);
  const worker = await kit.worker(relay);
  try {
    const once = await kit.create('once', { seconds: ALONE_RUN_SECONDS });
    const again = await kit.create('again', { seconds: ALONE_RUN_SECONDS, retrySeconds: 1 });
    await startsOn(kit, once, worker);
    await startsOn(kit, again, worker);
    relay.setMode(mode);
    const cutAt = Date.now();
    await holdCut(ALONE_CUT_MS);
    relay.setMode('pass');
    await kit.settled(once).finally(() => printTimeline('retry: false', kit.runsOf(once), cutAt));
    await kit.settled(again).finally(() => printTimeline('retry: true', kit.runsOf(again), cutAt));

    await assertRanAtMostOnce(kit, once);
    await assertKeptOneRun(kit, again);
    await assertServesAfterHeal(kit, worker);
    kit.assertNoUnhandledRejection();
  } finally {
    await worker.kill('SIGKILL');
  }
}

export async function workerCutOffBesideAnother(kit: PartitionKit): Promise<void> {
  const relay = await kit.relay();
  const cutOff = await kit.worker(relay);
  let other: Child | undefined;
  try {
    // Runs far longer than the takeover: whatever stops them is the lease, not their end.
    const once = await kit.create('once', { seconds: 300 });
    const again = await kit.create('again', { seconds: 300, retrySeconds: 1 });
    await startsOn(kit, once, cutOff);
    await startsOn(kit, again, cutOff);
    other = await kit.worker();
    relay.setMode('blackhole');
    const cutAt = Date.now();
    const takenOver = other;
    await waitFor(
      'the other worker to take the retry: true task over',
      () => starts(kit.runsOf(again)).some((line) => line.pid === takenOver.process.pid),
      { timeoutMs: TAKEOVER_MS },
    );
    const onceEnd = await kit.settled(once, TAKEOVER_MS);
    const cutOffOnceRun = kit.runsOf(once).filter((line) => line.pid === cutOff.process.pid);
    relay.setMode('pass');
    printTimeline('retry: false', kit.runsOf(once), cutAt);
    printTimeline('retry: true', kit.runsOf(again), cutAt);

    await assertRanAtMostOnce(kit, once);
    assert.equal(onceEnd.status, 'failed', 'its lease lost, the retry: false task is interrupted');
    assert.ok(
      cutOffOnceRun.some(ended),
      `the cut-off worker was still running the retry: false tool when its task failed: ${JSON.stringify(cutOffOnceRun)}`,
    );
    const winner = await assertKeptOneRun(kit, again);
    assert.equal(winner.pid, other.process.pid, 'the run that took over is the one kept');
    assertStoppedBeforeTakeover(kit.runsOf(again), cutOff, other);

    // The cut-off run's late end (if it had one) must not reach the task: serve one task on the
    // healed worker alone, then read the task again.
    await other.kill('SIGKILL');
    await assertServesAfterHeal(kit, cutOff);
    assert.equal(resultText(await kit.settled(again)), `run of ${other.process.pid} attempt 2`);
    assert.equal(kit.terminalWrites.get(again), 1, 'the late outcome wrote nothing');
    kit.assertNoUnhandledRejection();
  } finally {
    await cutOff.kill('SIGKILL');
    await other?.kill('SIGKILL');
  }
}

/** The cut-off run ended (aborted: its lease was lost) before the other worker's run started. */
function assertStoppedBeforeTakeover(runs: JournalLine[], cutOff: Child, other: Child): void {
  const end = runs.findIndex((line) => line.pid === cutOff.process.pid && ended(line));
  const takeover = runs.findIndex(
    (line) => line.pid === other.process.pid && line.event === 'start',
  );
  assert.ok(
    end !== -1 && end < takeover,
    `the cut-off worker's run overlapped the takeover: ${JSON.stringify(runs)}`,
  );
  const stopped = runs[end] as JournalLine;
  if (stopped.event === 'aborted') assert.match(stopped.detail, /lease/i, stopped.detail);
}
