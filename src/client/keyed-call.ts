import { isClientError, TaskrailClientError } from './errors.js';
import type { RawDispatch, RpcReply } from './rpc-http.js';

const IDEMPOTENCY_KEY_META = 'dev.taskrail/idempotency-key';
const IDEMPOTENCY_KEY = /^[A-Za-z0-9._:-]{1,128}$/;

/** The `_meta` that names a call; throws USAGE for a key the server would refuse. */
export function idempotencyMeta(key: string): Record<string, string> {
  if (!IDEMPOTENCY_KEY.test(key)) {
    throw new TaskrailClientError(
      'USAGE',
      `idempotency key ${JSON.stringify(key)}: use 1–128 characters of A–Z a–z 0–9 . _ : -`,
    );
  }
  return { [IDEMPOTENCY_KEY_META]: key };
}

/**
 * Sends one `tools/call`. With an idempotency key a lost reply is safe to send again, so
 * connection failures are retried with backoff until `graceMs` runs out; without one, once.
 */
export async function sendToolCall(
  dispatch: RawDispatch,
  params: Record<string, unknown>,
  options: { keyed: boolean; graceMs: number; signal?: AbortSignal | undefined },
): Promise<RpcReply> {
  const request = { method: 'tools/call', params };
  const dispatchOptions = options.signal === undefined ? {} : { signal: options.signal };
  if (!options.keyed) return dispatch(request, dispatchOptions);
  const deadline = Date.now() + options.graceMs;
  for (let delay = 100; ; delay = Math.min(delay * 2, 1000)) {
    try {
      return await dispatch(request, dispatchOptions);
    } catch (error) {
      const retry = isClientError(error, 'CONNECTION') && options.signal?.aborted !== true;
      if (!retry || Date.now() + delay > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
