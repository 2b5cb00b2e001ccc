import { RPC, RpcError } from '../task/errors.js';
import { IDEMPOTENCY_KEY_RULE, isIdempotencyKey } from '../task/idempotency-key.js';
import type { TaskRecord } from '../task/record.js';

/** A retried creation names its first attempt with this key; see docs/host-client.md. */
export function assertIdempotencyKey(key: unknown): asserts key is string | undefined {
  if (key === undefined) return;
  if (!isIdempotencyKey(key)) {
    throw new RpcError(RPC.INVALID_PARAMS, `An idempotency key must be ${IDEMPOTENCY_KEY_RULE}.`);
  }
}

/**
 * A key names one call: a retry must repeat it. The same key with another tool or other
 * arguments is a client bug, refused rather than answered with an unrelated task.
 */
export function assertSameCall(earlier: TaskRecord, retry: TaskRecord): void {
  if (
    earlier.tool === retry.tool &&
    JSON.stringify(earlier.arguments) === JSON.stringify(retry.arguments)
  ) {
    return;
  }
  throw new RpcError(
    RPC.INVALID_PARAMS,
    `Idempotency key "${retry.idempotencyKey ?? ''}" was already used for a different call ` +
      `(tool '${earlier.tool}'); use a new key for a new call.`,
  );
}
