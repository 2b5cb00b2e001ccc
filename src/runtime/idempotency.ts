import { RPC, RpcError } from '../task/errors.js';
import type { TaskRecord } from '../task/record.js';

const KEY_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** A retried creation names its first attempt with this key; see docs/host-client.md. */
export function assertIdempotencyKey(key: unknown): asserts key is string | undefined {
  if (key === undefined) return;
  if (typeof key !== 'string' || !KEY_PATTERN.test(key)) {
    throw new RpcError(
      RPC.INVALID_PARAMS,
      'An idempotency key must be 1–128 characters of A–Z, a–z, 0–9, ".", "_", ":" or "-".',
    );
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
