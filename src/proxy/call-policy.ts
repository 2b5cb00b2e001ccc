import type { TaskSettings } from '../runtime/tool.js';
import { RpcError, RPC, TaskrailError } from '../task/errors.js';

/** `--timeout` and `--retry` of `taskrail proxy` (and a worker given an upstream). */
export interface UpstreamCallPolicy {
  /** The limit of one attempt of an upstream tool call made as a task, in ms; undefined = none. */
  timeoutMs?: number | undefined;
  /** Calls made again after an error or a time-out, at most; 0 = none (the default). */
  retries?: number | undefined;
}

/**
 * The upstream's answers that say the request itself is wrong: the same call gets the same
 * answer, so they are never retried.
 */
const REQUEST_REFUSED = new Set<number>([
  RPC.PARSE_ERROR,
  RPC.INVALID_REQUEST,
  RPC.METHOD_NOT_FOUND,
  RPC.INVALID_PARAMS,
]);

/** Checks the policy once, at start, with errors that name the flag. */
export function checkCallPolicy(policy: UpstreamCallPolicy): void {
  const { timeoutMs, retries } = policy;
  if (timeoutMs !== undefined && !(Number.isSafeInteger(timeoutMs) && timeoutMs > 0)) {
    throw new TaskrailError(
      'CONFIG',
      `--timeout must be a whole number of ms ≥ 1, got ${timeoutMs}`,
    );
  }
  if (retries !== undefined && !(Number.isSafeInteger(retries) && retries >= 0)) {
    throw new TaskrailError('CONFIG', `--retry must be a whole number ≥ 0, got ${retries}`);
  }
}

/**
 * The run policy of every upstream tool served as a task: the runtime's own `timeoutMs`, and
 * with retries `retry: { maxAttempts: retries + 1, onError: true }` (default backoff: 1 s,
 * doubling, at most 60 s). Without retries a crash still re-runs the handler, which decides
 * whether the upstream may be called again (proxy-tool.ts).
 */
export function taskPolicyOf(
  policy: UpstreamCallPolicy,
): Pick<TaskSettings, 'retry' | 'timeoutMs'> {
  const retries = policy.retries ?? 0;
  return {
    retry: retries > 0 ? { maxAttempts: retries + 1, onError: true } : true,
    ...(policy.timeoutMs === undefined ? {} : { timeoutMs: policy.timeoutMs }),
  };
}

/**
 * What a failed upstream call throws. While attempts are left under `--retry`, a failure that
 * may pass (the upstream unreachable or gone, its own internal error, a lost upstream task)
 * becomes a plain error, which the runtime retries after its backoff; otherwise (no retries,
 * the last attempt, or an answer that says the request is wrong) the upstream's own code and
 * message end the task.
 */
export function failedCallError(
  error: RpcError,
  attempt: number,
  policy: UpstreamCallPolicy,
): Error {
  const maxAttempts = (policy.retries ?? 0) + 1;
  if (attempt >= maxAttempts || REQUEST_REFUSED.has(error.code)) return error;
  return new Error(
    `${error.message} (upstream error ${error.code}; attempt ${attempt} of ${maxAttempts})`,
  );
}
