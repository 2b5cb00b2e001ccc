import { performance } from 'node:perf_hooks';
import type { LeaseGrant } from '../store/port.js';
import { isTerminal } from '../task/status.js';
import { stopReasons } from './abort-reasons.js';
import type { RunState } from './durable-backend.js';
import type { RunAbort } from './run-abort.js';
import type { RunnerSettings } from './runner-settings.js';
import { timerDelay } from '../task/timers.js';

/**
 * How long before its lease could run out a runner that cannot renew it stops the attempt: a
 * fifth of the lease (3 s of the default 15 s). The handler then has that long to notice its
 * signal before any other runner may claim the task, and a renewal may fail several times in
 * a row (one is sent every `min(1 s, lease / 3)`) before the attempt is given up.
 */
export function selfFenceMarginMs(leaseMs: number): number {
  return Math.floor(leaseMs / 5);
}

/**
 * Renews the lease while the handler runs. A lost lease or a status that is no longer
 * `working` (cancelled from another process, parked) aborts the handler's signal. A renewal
 * that fails is reported to the store's health (one line per outage), never thrown.
 *
 * Self-fencing: the lease can run out no earlier than `leaseMs` after the last renewal that
 * succeeded was *sent* (the store started its new term after that moment). Judged on this
 * process's monotonic clock, which no clock skew between machines can move, the attempt is
 * stopped at `sent + leaseMs - margin`: its signal aborts with a reason that says the lease
 * could not be renewed, renewals stop, and the runner writes nothing more for it.
 * `claimSentAt`: when the claim that granted the lease was sent (performance.now()).
 */
export function startHeartbeat(
  settings: RunnerSettings,
  taskId: string,
  lease: LeaseGrant,
  controller: RunAbort,
  run: RunState,
  claimSentAt: number,
): () => void {
  let confirmedAt = claimSentAt;
  let fence: NodeJS.Timeout | undefined;
  const stop = () => {
    clearInterval(timer);
    clearTimeout(fence);
  };
  const selfFence = () => {
    stop();
    run.leaseLost = true;
    settings.logger.warn(
      'lease not renewed in time: the attempt is stopped before its lease runs out and its ' +
        'outcome is discarded; the task is left to recovery as interrupted',
      { taskId, sinceLastRenewalMs: Math.round(performance.now() - confirmedAt) },
    );
    controller.abort(stopReasons.leaseUnrenewed());
  };
  const armFence = () => {
    clearTimeout(fence);
    const deadline = confirmedAt + settings.leaseMs - selfFenceMarginMs(settings.leaseMs);
    fence = setTimeout(selfFence, timerDelay(deadline - performance.now()));
    fence.unref();
  };
  const renew = () => {
    const sentAt = performance.now();
    settings.store
      .renewLease(taskId, lease.token, settings.leaseMs)
      .then(({ held, status }) => {
        settings.health.ok();
        if (run.leaseLost) return;
        if (status !== undefined && isTerminal(status)) {
          controller.abort(stopReasons.terminal(status));
        } else if (!held && status === 'working') {
          run.leaseLost = true;
          controller.abort(stopReasons.leaseLost());
        } else if (held) {
          confirmedAt = Math.max(confirmedAt, sentAt);
          armFence();
        }
      })
      .catch((error: unknown) => settings.health.failed('renew lease', error));
  };
  const timer = setInterval(renew, timerDelay(settings.heartbeatMs));
  timer.unref();
  armFence();
  return stop;
}
