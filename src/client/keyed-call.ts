import { TASKRAIL_META, TOOLS_CALL_METHOD } from '../protocol/constants.js';
import { IDEMPOTENCY_KEY_RULE, isIdempotencyKey } from '../task/idempotency-key.js';
import { isClientError, TaskrailClientError } from './errors.js';
import type { RawDispatch, RpcReply } from './rpc-http.js';
import { backoffDelayMs, type Backoff } from '../task/backoff.js';
import { timerDelay } from '../task/timers.js';

/** A keyed call sent again: 100 ms, 200 ms, … up to 1 s between sends. */
const RESEND: Backoff = { backoffMs: 100, maxBackoffMs: 1000 };

/** The `_meta` that names a call; throws USAGE for a key the server would refuse. */
export function idempotencyMeta(key: string): Record<string, string> {
  if (!isIdempotencyKey(key)) {
    throw new TaskrailClientError(
      'USAGE',
      `idempotency key ${JSON.stringify(key)}: use ${IDEMPOTENCY_KEY_RULE}`,
    );
  }
  return { [TASKRAIL_META.idempotencyKey]: key };
}

/**
 * Sends one `tools/call`. With an idempotency key a lost reply is safe to send again, so
 * connection failures and the server's own trouble (-32603 with HTTP 503: its store is locked,
 * full or down) are retried with backoff until `graceMs` runs out; without one, once.
 */
export async function sendToolCall(
  dispatch: RawDispatch,
  params: Record<string, unknown>,
  options: { keyed: boolean; graceMs: number; signal?: AbortSignal | undefined },
): Promise<RpcReply> {
  const request = { method: TOOLS_CALL_METHOD, params };
  const dispatchOptions = options.signal === undefined ? {} : { signal: options.signal };
  if (!options.keyed) return dispatch(request, dispatchOptions);
  const deadline = Date.now() + options.graceMs;
  for (let retry = 1; ; retry += 1) {
    const delay = backoffDelayMs(RESEND, retry);
    try {
      const reply = await dispatch(request, dispatchOptions);
      const again = reply.kind === 'error' && reply.retryable === true && !options.signal?.aborted;
      if (!again || Date.now() + delay > deadline) return reply;
    } catch (error) {
      const retry = isClientError(error, 'CONNECTION') && options.signal?.aborted !== true;
      if (!retry || Date.now() + delay > deadline) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, timerDelay(delay)));
  }
}
