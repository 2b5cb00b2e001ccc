import { performance } from 'node:perf_hooks';
import type { LeaseGrant } from '../store/port.js';
import { isTerminal } from '../task/status.js';
import { stopReasons } from './abort-reasons.js';
import type { RunState } from './durable-backend.js';
import type { RunAbort } from './run-abort.js';
import type { RunnerSettings } from './runner-settings.js';

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
 * How long after an outage of the store a claim spares expired leases (see
 * `ClaimOptions.spareExpired`): one renewal interval for the holders' renewals to be sent, and
 * one more for them to land.
 */
export function outageGraceMs(heartbeatMs: number): number {
  return 2 * heartbeatMs;
}

/**
 * Renews the lease while the attempt holds it: while the handler runs and while its outcome is
 * being written. A renewal the store answers with another holder (or a status that is no
 * longer `working`: cancelled from another process, parked) aborts the handler's signal. A
 * renewal that fails is reported to the store's health (one line per outage), never thrown.
 *
 * Self-fencing stops a *running* handler: the lease can run out no earlier than `leaseMs`
 * after the last renewal that succeeded was *sent* (the store started its new term after that
 * moment). Judged on this process's monotonic clock, which no clock skew between machines can
 * move, the handler's signal is aborted at `sent + leaseMs - margin` with a reason that says
 * the lease could not be renewed, renewals stop, and nothing the attempt writes or returns is
 * kept. Once the handler has returned (`run.settled`) the clock decides nothing: renewals go
 * on, so a live holder renews as soon as the store answers again, and the outcome is offered
 * to the store, whose fenced compare-and-set alone says whether the lease is still its own.
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
    if (run.settled === true || run.leaseLost) return;
    stop();
    run.leaseLost = true;
    settings.logger.warn(
      'lease not renewed in time: the running handler is stopped before its lease could run ' +
        'out, and nothing it writes or returns is kept; the task is left to recovery as ' +
        'interrupted',
      { taskId, sinceLastRenewalMs: Math.round(performance.now() - confirmedAt) },
    );
    controller.abort(stopReasons.leaseUnrenewed());
  };
  const armFence = () => {
    clearTimeout(fence);
    if (run.settled === true) return;
    const deadline = confirmedAt + settings.leaseMs - selfFenceMarginMs(settings.leaseMs);
    fence = setTimeout(selfFence, Math.max(0, deadline - performance.now()));
    fence.unref();
  };
  const renew = () => {
    if (fence === undefined) armFence();
    const sentAt = performance.now();
    settings.store
      .renewLease(taskId, lease.token, settings.leaseMs)
      .then(({ held, status }) => {
        settings.health.ok();
        if (run.leaseLost) return;
        if (status !== undefined && isTerminal(status)) {
          controller.abort(stopReasons.terminal(status));
        } else if (!held && status === 'working') {
          run.takenOver = true;
          run.leaseLost = true;
          controller.abort(stopReasons.leaseLost());
        } else if (held) {
          confirmedAt = Math.max(confirmedAt, sentAt);
          armFence();
        }
      })
      .catch((error: unknown) => settings.health.failed('renew lease', error));
  };
  const timer = setInterval(renew, settings.heartbeatMs);
  timer.unref();
  // The fence's deadline (four fifths of the lease from the claim) normally lies past the first
  // renewal, which arms it: most runs end before that tick and set no second timer at all.
  if (settings.leaseMs - selfFenceMarginMs(settings.leaseMs) <= settings.heartbeatMs) armFence();
  return stop;
}
