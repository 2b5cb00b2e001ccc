/**
 * Why a running handler's signal was aborted. The reason decides what the runner writes and
 * logs afterwards: a cancelled task is already terminal; a lost lease belongs to someone else
 * now; a run stopped by a graceful shutdown is handed back as interrupted.
 */
export class RunStopped extends Error {
  readonly why: 'cancelled' | 'lease-lost' | 'shutdown' | 'terminal' | 'parked' | 'timed-out';
  constructor(why: RunStopped['why'], message: string) {
    super(message);
    this.name = 'RunStopped';
    this.why = why;
  }
}

export const stopReasons = {
  cancelled: () => new RunStopped('cancelled', 'task cancelled'),
  leaseLost: () => new RunStopped('lease-lost', 'lease lost: another runner took the task over'),
  /** Self-fencing: the same `why`, since the attempt no longer owns its task either way. */
  leaseUnrenewed: () =>
    new RunStopped(
      'lease-lost',
      'lease lost: it could not be renewed before it ran out (the task store is unreachable); ' +
        'this attempt is stopped and the task is left to recovery',
    ),
  shutdown: () => new RunStopped('shutdown', 'shutting down: the grace period ran out'),
  terminal: (status: string) => new RunStopped('terminal', `task ${status}`),
  parked: () => new RunStopped('parked', 'task parked waiting for input'),
  timedOut: (limitMs: number) =>
    new RunStopped('timed-out', `timed out after ${limitMs} ms (the tool's timeoutMs)`),
};

/** `signal`: an AbortSignal or a RunAbort (anything with the abort's reason). */
export function stopReasonOf(signal: { reason: unknown }): RunStopped['why'] | undefined {
  return signal.reason instanceof RunStopped ? signal.reason.why : undefined;
}
