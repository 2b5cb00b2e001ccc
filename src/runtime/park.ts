import type { InputRequest } from '../task/record.js';

/**
 * Thrown by `ctx.input()` when the answers are not there yet. It unwinds the handler: the task
 * is parked (durably `input_required`) and the handler runs again once every key is answered.
 * Handlers must let it propagate; catching it and carrying on would not un-park the task.
 */
export class ParkSignal extends Error {
  readonly requests: Record<string, InputRequest>;
  constructor(requests: Record<string, InputRequest>) {
    super('task parked waiting for input');
    this.name = 'ParkSignal';
    this.requests = requests;
  }
}

export function isParkSignal(error: unknown): error is ParkSignal {
  return error instanceof ParkSignal;
}

/**
 * Thrown by a handler whose run belongs in another process (it holds live state this one
 * lacks, such as an open upstream call): the run ends without an outcome, the lease is handed
 * back as if never taken (no attempt counted), and the task stays `working` for that process
 * to claim (`TaskRuntime.runHere`) or for the next recovery scan.
 */
export class HandBackSignal extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'HandBackSignal';
  }
}

export function isHandBackSignal(error: unknown): error is HandBackSignal {
  return error instanceof HandBackSignal;
}
