import { backoffDelayMs } from '../task/backoff.js';
import { TaskrailError } from '../task/errors.js';
import { MAX_DURABLE_WAIT_MS } from '../task/timers.js';
import { concurrencyProblem } from './concurrency.js';
import type { RetryOptions, TaskSettings } from './tool.js';

/**
 * The run policy of a tool, resolved once from its `task` option: how long one attempt may run
 * and what follows a crash, a thrown error or a time-out. Pure: no clock, no I/O.
 */
export interface RunPolicy {
  /** The limit of one attempt in ms; undefined = none. */
  timeoutMs: number | undefined;
  /** `false`: never run twice. */
  retry: false | ResolvedRetry;
}

export interface ResolvedRetry {
  /** Every attempt counts, crashes and errors together. */
  maxAttempts: number;
  /** Re-run after a thrown error or a time-out (with backoff), not only after a crash. */
  onError: boolean;
  backoffMs: number;
  backoffFactor: number;
  maxBackoffMs: number;
}

export const RETRY_DEFAULTS = {
  onError: false,
  backoffMs: 1000,
  backoffFactor: 2,
  maxBackoffMs: 60_000,
} as const;

/** The policy of `settings`; `defaultMaxAttempts` is the runtime's (3 unless configured). */
export function runPolicyOf(settings: TaskSettings, defaultMaxAttempts = 3): RunPolicy {
  const retry = settings.retry ?? true;
  const timeoutMs = settings.timeoutMs;
  if (retry === false) return { timeoutMs, retry: false };
  const options: RetryOptions = retry === true ? {} : retry;
  return {
    timeoutMs,
    retry: {
      maxAttempts: options.maxAttempts ?? defaultMaxAttempts,
      onError: options.onError ?? RETRY_DEFAULTS.onError,
      backoffMs: options.backoffMs ?? RETRY_DEFAULTS.backoffMs,
      backoffFactor: options.backoffFactor ?? RETRY_DEFAULTS.backoffFactor,
      maxBackoffMs: options.maxBackoffMs ?? RETRY_DEFAULTS.maxBackoffMs,
    },
  };
}

/** The attempts a task of this tool may have: 1 for `retry: false`. */
export function maxAttemptsOf(settings: TaskSettings, defaultMaxAttempts = 3): number {
  // runPolicyOf's answer, without building the whole policy on every create.
  const retry = settings.retry ?? true;
  if (retry === false) return 1;
  return (retry === true ? undefined : retry.maxAttempts) ?? defaultMaxAttempts;
}

/** How an attempt failed: it threw (a retryable error), timed out, or threw a final RpcError. */
export type FailureKind = 'threw' | 'timed-out' | 'final';

export type AfterFailure = { retry: false } | { retry: true; delayMs: number; nextAttempt: number };

/** What follows a failed attempt: the task fails, or runs again after a wait. */
export function afterFailure(policy: RunPolicy, attempt: number, kind: FailureKind): AfterFailure {
  const retry = policy.retry;
  if (retry === false || !retry.onError || kind === 'final') return { retry: false };
  if (attempt >= retry.maxAttempts) return { retry: false };
  // The wait before attempt `attempt + 1`: backoffMs × backoffFactor^(attempt−1), capped.
  return { retry: true, delayMs: backoffDelayMs(retry, attempt), nextAttempt: attempt + 1 };
}

/** `2026-12-02T12:03:04Z` → `12:03:04Z`: short enough for a status line, still UTC. */
export function clockTime(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(11, 19) + 'Z';
}

export function retryStatusMessage(
  nextAttempt: number,
  maxAttempts: number,
  wakeAt: number,
  reason: string,
): string {
  return `attempt ${nextAttempt} of ${maxAttempts} at ${clockTime(wakeAt)} after: ${reason}`;
}

/** `2026-12-04 03:11:26Z`: the date too (a nightly sleep ends tomorrow), in words that wrap. */
export function sleepStatusMessage(wakeAt: number): string {
  const iso = new Date(wakeAt).toISOString();
  return `sleeping until ${iso.slice(0, 10)} ${clockTime(wakeAt)}`;
}

/**
 * Checks a tool's run policy at registration; throws a CONFIG error that names the tool, the
 * option and what to write instead.
 */
export function assertRunPolicy(tool: string, settings: TaskSettings): void {
  const problem = runPolicyProblem(settings);
  if (problem !== undefined) throw new TaskrailError('CONFIG', `tool '${tool}': task.${problem}`);
}

function runPolicyProblem(settings: TaskSettings): string | undefined {
  if (settings.timeoutMs !== undefined && !isPositiveInteger(settings.timeoutMs)) {
    return `timeoutMs must be a positive integer (ms), got ${show(settings.timeoutMs)}; leave it out for no limit`;
  }
  if (settings.concurrency !== undefined) {
    const problem = concurrencyProblem(settings.concurrency);
    if (problem !== undefined) return problem;
  }
  const retry = settings.retry;
  if (retry === undefined || typeof retry === 'boolean') return undefined;
  if (typeof retry !== 'object' || retry === null || Array.isArray(retry)) {
    return `retry must be true, false or { maxAttempts?, onError?, backoffMs?, backoffFactor?, maxBackoffMs? }, got ${show(retry)}`;
  }
  return retryProblem(retry);
}

const RETRY_KEYS = new Set([
  'maxAttempts',
  'onError',
  'backoffMs',
  'backoffFactor',
  'maxBackoffMs',
]);

function retryProblem(retry: RetryOptions): string | undefined {
  const unknown = Object.keys(retry).find((key) => !RETRY_KEYS.has(key));
  if (unknown !== undefined) {
    return `retry.${unknown} is not an option; use maxAttempts, onError, backoffMs, backoffFactor or maxBackoffMs`;
  }
  const { maxAttempts, onError, backoffMs, backoffFactor, maxBackoffMs } = retry;
  if (maxAttempts !== undefined && !isPositiveInteger(maxAttempts)) {
    return `retry.maxAttempts must be a positive integer (every attempt counts, the first too), got ${show(maxAttempts)}`;
  }
  if (onError !== undefined && typeof onError !== 'boolean') {
    return `retry.onError must be true or false, got ${show(onError)}`;
  }
  if (backoffMs !== undefined && !isWaitMs(backoffMs)) {
    return `retry.backoffMs must be an integer from 0 to ${MAX_DURABLE_WAIT_MS} (10 years; ms before the second attempt), got ${show(backoffMs)}`;
  }
  if (backoffFactor !== undefined && !(Number.isFinite(backoffFactor) && backoffFactor >= 1)) {
    return `retry.backoffFactor must be a number ≥ 1 (1 = the same wait every time), got ${show(backoffFactor)}`;
  }
  if (maxBackoffMs !== undefined && !isWaitMs(maxBackoffMs)) {
    return `retry.maxBackoffMs must be an integer from 0 to ${MAX_DURABLE_WAIT_MS} (10 years; the longest wait in ms), got ${show(maxBackoffMs)}`;
  }
  if (maxBackoffMs !== undefined && backoffMs !== undefined && maxBackoffMs < backoffMs) {
    return `retry.maxBackoffMs (${maxBackoffMs}) is below retry.backoffMs (${backoffMs}); raise maxBackoffMs or lower backoffMs`;
  }
  return undefined;
}

function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}

/** A durable wait's length: a whole number of ms, at most `MAX_DURABLE_WAIT_MS`. */
function isWaitMs(value: unknown): value is number {
  return (
    typeof value === 'number' &&
    Number.isSafeInteger(value) &&
    value >= 0 &&
    value <= MAX_DURABLE_WAIT_MS
  );
}

function show(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}
