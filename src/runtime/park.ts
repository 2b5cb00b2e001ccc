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
