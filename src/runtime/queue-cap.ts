import type { PermitAsk } from '../store/port.js';
import type { DispatchHint } from './api.js';
import { isTaskrailError, RpcError } from '../task/errors.js';

/** Unfinished tasks one principal may have at once unless configured (`--max-queued-per-principal`). */
export const DEFAULT_MAX_QUEUED_PER_PRINCIPAL = 10_000;

/** What a refused create tells the caller to wait before trying again (HTTP `Retry-After`). */
export const QUEUE_FULL_RETRY_AFTER_SECONDS = 2;

/** JSON-RPC's "limit reached" server error (`SERVER_ERROR.LIMIT_REACHED` of the protocol layer). */
const LIMIT_REACHED = -32000;

/** A create refused because its caller already has the most unfinished tasks allowed. */
export class QueueFullError extends RpcError {
  constructor(maxQueuedPerPrincipal: number) {
    super(
      LIMIT_REACHED,
      `Too many unfinished tasks: this caller already has ${maxQueuedPerPrincipal} working or ` +
        `input_required tasks (the most allowed); retry after some of them finish`,
      { maxQueuedPerPrincipal, retryAfterSeconds: QUEUE_FULL_RETRY_AFTER_SECONDS },
    );
    this.name = 'QueueFullError';
  }
}

export function isQueueFull(error: unknown): error is QueueFullError {
  return error instanceof QueueFullError;
}

/** Checks a cap given to the runtime: a positive whole number. */
export function checkQueueCap(max: number): number {
  if (!Number.isSafeInteger(max) || max < 1) {
    throw new RangeError(`maxQueuedPerPrincipal must be a positive integer, got ${max}`);
  }
  return max;
}

/** A store's refusal of a create past `CreateOptions.maxUnfinished`, as the wire's error. */
export function asQueueFull(error: unknown, max: number): unknown {
  return isTaskrailError(error) && error.code === 'QUEUE_FULL' ? new QueueFullError(max) : error;
}

/** The dispatch hint of a new task: its caller, and its place among the caller's unfinished. */
export function hintOf(
  principal: string,
  position: number | undefined,
  permit?: PermitAsk,
): DispatchHint {
  const hint: DispatchHint = position === undefined ? { principal } : { principal, position };
  if (permit !== undefined) hint.permit = permit;
  return hint;
}
