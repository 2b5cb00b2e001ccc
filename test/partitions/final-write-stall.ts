/**
 * A worker whose link to its store fails just as its handlers return, for longer than the
 * lease: it stalls (`blackhole`: every byte dropped) or refuses (`reset`: every connection
 * reset, as while the store restarts). The outcomes in hand are offered until the link heals and land;
 * the worker's own recovery never claims the tasks it is finishing; each tool started once,
 * `retry: false` and `retry: true` alike, and each task has exactly one terminal write.
 */
import assert from 'node:assert/strict';
import type { RelayMode } from '../helpers/tcp-relay.js';
import { waitFor } from '../helpers/wait.js';
import {
  LEASE_MS,
  holdCut,
  printTimeline,
  resultText,
  type JournalLine,
  type PartitionKit,
} from './harness.js';

const RUN_SECONDS = 2;
/** Counted from the handlers' return: the final writes fail for longer than the lease. */
const CUT_MS = 3 * LEASE_MS;

const eventsOf = (lines: JournalLine[], event: JournalLine['event']) =>
  lines.filter((line) => line.event === event);

export async function workerCutAtFinalWrite(kit: PartitionKit, mode: RelayMode): Promise<void> {
  const relay = await kit.relay();
  const worker = await kit.worker(relay);
  try {
    const tasks = [
      await kit.create('once', { seconds: RUN_SECONDS }),
      await kit.create('again', { seconds: RUN_SECONDS }),
    ];
    const runsOn = (id: string, event: JournalLine['event']) =>
      eventsOf(kit.runsOf(id), event).some((line) => line.pid === worker.process.pid);
    await waitFor('both runs to start', () => tasks.every((id) => runsOn(id, 'start')), {
      timeoutMs: 30_000,
    });
    relay.setMode(mode);
    const cutAt = Date.now();
    await waitFor('both handlers to return inside the cut', () =>
      tasks.every((id) => runsOn(id, 'done')),
    );
    await holdCut(CUT_MS);
    relay.setMode('pass');
    for (const id of tasks) {
      const task = await kit
        .settled(id, 60_000)
        .finally(() => printTimeline(id, kit.runsOf(id), cutAt));
      const runs = kit.runsOf(id);
      assert.equal(
        task.status,
        'completed',
        `${JSON.stringify(task.error)} ${JSON.stringify(runs)}`,
      );
      assert.equal(eventsOf(runs, 'start').length, 1, `started once: ${JSON.stringify(runs)}`);
      assert.equal(resultText(task), `run of ${worker.process.pid} attempt 1`);
      await waitFor('the terminal write to be seen', () => kit.terminalWrites.get(id));
      assert.equal(kit.terminalWrites.get(id), 1, 'exactly one terminal write');
    }
    kit.assertNoUnhandledRejection();
  } finally {
    await worker.kill('SIGKILL');
  }
}
