/**
 * `taskrail serve` stopped (SIGTERM) while its store link is blackholed: every part of a stop
 * waits on the store, which never answers, so the stop must give up by itself, within its
 * bound, and say what it was still waiting for.
 */
import assert from 'node:assert/strict';
import { STOP_BOUND_MS } from '../../src/cli/graceful-stop.js';
import type { Child } from '../helpers/child.js';
import { waitFor } from '../helpers/wait.js';
import type { PartitionKit } from './harness.js';

/** Process start-up jitter on a loaded machine, not a second chance for the stop. */
const SLACK_MS = 5_000;

export async function stopWhileCutOff(kit: PartitionKit, worker: boolean): Promise<void> {
  const relay = await kit.relay();
  const { dispatch, child } = await kit.serverThrough(relay, { worker });
  const taskId = await kit.create('once', { seconds: 300 });
  if (worker) {
    // The only worker: a stop must abort this run and try to hand its lease back.
    await waitFor('the task to start on this server', () =>
      kit.runsOf(taskId).some((line) => line.pid === child.process.pid),
    );
  } else {
    assert.equal((await dispatch({ method: 'tasks/get', params: { taskId } })).kind, 'result');
  }
  relay.setMode('blackhole');
  const stoppedAt = Date.now();
  child.process.kill('SIGTERM');
  try {
    await waitFor('the server to exit after SIGTERM', () => child.process.exitCode !== null, {
      timeoutMs: STOP_BOUND_MS + SLACK_MS,
      intervalMs: 100,
    });
  } finally {
    process.stdout.write(`# exit ${child.process.exitCode} ${Date.now() - stoppedAt} ms\n`);
    await child.kill('SIGKILL');
  }
  assertSaidWhy(child);
}

/** A clean stop exits 0; one that gave up exits 1 and names what it was waiting for. */
function assertSaidWhy(child: Child): void {
  const code = child.process.exitCode;
  const log = child.stderr();
  if (code === 0) return;
  assert.equal(code, 1, log);
  assert.match(log, /graceful stop: not done after 20 s/, log);
  assert.match(log, /waitingFor[^\n]*(close|stop|leave)/, log);
}
