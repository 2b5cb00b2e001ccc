import { RpcError, RPC } from '../task/errors.js';
import type { TaskSettings } from './tool.js';

export interface TtlPolicy {
  defaultTtlMs: number;
  maxTtlMs: number;
  allowUnlimitedTtl: boolean;
}

/** The ttl a new task gets: the request's or the tool's, else the default; capped at the max. */
export function resolveTtl(
  requested: number | null | undefined,
  tool: TaskSettings,
  policy: TtlPolicy,
): number | null {
  const wanted = requested !== undefined ? requested : tool.ttlMs;
  if (wanted === undefined) return Math.min(policy.defaultTtlMs, policy.maxTtlMs);
  if (wanted === null) return policy.allowUnlimitedTtl ? null : policy.maxTtlMs;
  if (!Number.isFinite(wanted) || wanted <= 0)
    return Math.min(policy.defaultTtlMs, policy.maxTtlMs);
  return Math.min(Math.round(wanted), policy.maxTtlMs);
}

/** Tool arguments larger than this (bytes of JSON) are refused, unless `maxArgumentsBytes` says otherwise. */
export const DEFAULT_MAX_ARGUMENTS_BYTES = 1024 * 1024;

export function jsonSize(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
}

export function assertArgumentsSize(args: unknown, limit: number): void {
  const size = jsonSize(args);
  if (size > limit) {
    throw new RpcError(
      RPC.INVALID_PARAMS,
      `arguments are ${size} bytes of JSON; this server accepts at most ${limit}`,
    );
  }
}

export function resultTooLarge(size: number, limit: number): RpcError {
  return new RpcError(
    RPC.INTERNAL_ERROR,
    `the tool's result is ${size} bytes of JSON; this server keeps at most ${limit}`,
  );
}

export function formatProgress(update: {
  progress?: number;
  total?: number;
  message?: string;
}): string | undefined {
  const { progress, total, message } = update;
  const counter =
    progress === undefined
      ? undefined
      : total === undefined
        ? `${progress}`
        : `${progress}/${total}`;
  if (message !== undefined && counter !== undefined) return `${message} (${counter})`;
  return message ?? counter;
}
