import type { PermitAsk } from '../store/port.js';
import { RPC, RpcError } from '../task/errors.js';
import type { JsonObject, TaskRecord } from '../task/record.js';
import type { ConcurrencyOptions, RunnableTool } from './tool.js';

/** Where a task keeps its concurrency key, computed once at creation. */
export const CONCURRENCY_KEY_META = 'taskrail/concurrencyKey';

/** A key longer than this is refused: it is stored with every permit and waiter. */
const MAX_KEY_LENGTH = 512;

/**
 * The concurrency key of a call of `tool`, or undefined when the tool has no limit. A key
 * function that throws or returns anything but a non-empty string fails the create (-32602).
 */
export function concurrencyKeyOf(
  tool: RunnableTool,
  args: JsonObject,
  principal: string,
): string | undefined {
  const key = tool.task.concurrency?.key;
  if (tool.task.concurrency === undefined) return undefined;
  if (key === undefined || key === 'tool') return tool.name;
  if (key === 'principal') return principal;
  let value: unknown;
  try {
    value = key(args, principal);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new RpcError(RPC.INVALID_PARAMS, `tool '${tool.name}': concurrency.key threw: ${why}`);
  }
  if (typeof value !== 'string' || value === '' || value.length > MAX_KEY_LENGTH) {
    throw new RpcError(
      RPC.INVALID_PARAMS,
      `tool '${tool.name}': concurrency.key must return a non-empty string of at most ` +
        `${MAX_KEY_LENGTH} characters, got ${describe(value)}`,
    );
  }
  return value;
}

/** The key stored with the task; a task created before the tool had a limit gets one now. */
export function storedConcurrencyKey(tool: RunnableTool, task: TaskRecord): string | undefined {
  if (tool.task.concurrency === undefined) return undefined;
  const stored = task.meta[CONCURRENCY_KEY_META];
  if (typeof stored === 'string' && stored !== '') return stored;
  try {
    return concurrencyKeyOf(tool, task.arguments, task.principal);
  } catch {
    return tool.name;
  }
}

/** The permit an attempt of `task` needs (its stored key, the tool's limit), if any. */
export function permitAskOf(
  tool: RunnableTool | undefined,
  task: TaskRecord,
): PermitAsk | undefined {
  const limit = tool?.task.concurrency?.limit;
  const key = tool === undefined ? undefined : storedConcurrencyKey(tool, task);
  return key === undefined || limit === undefined ? undefined : { key, limit };
}

export function permitWaitMessage(key: string, limit: number): string {
  return `waiting for a concurrency slot: key ${key} (limit ${limit})`;
}

/** What is wrong with a `concurrency` option, for the registration error; undefined if fine. */
export function concurrencyProblem(option: unknown): string | undefined {
  if (typeof option !== 'object' || option === null || Array.isArray(option)) {
    return `concurrency must be { limit, key? }, got ${describe(option)}`;
  }
  const unknown = Object.keys(option).find((name) => name !== 'limit' && name !== 'key');
  if (unknown !== undefined) return `concurrency.${unknown} is not an option; use limit or key`;
  const { limit, key } = option as Partial<ConcurrencyOptions>;
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1) {
    return `concurrency.limit must be a positive integer (attempts at once per key), got ${describe(limit)}`;
  }
  if (key === undefined || key === 'tool' || key === 'principal' || typeof key === 'function') {
    return undefined;
  }
  return `concurrency.key must be 'tool', 'principal' or a function (args, principal) => string, got ${describe(key)}`;
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null || typeof value !== 'object') return String(value);
  return Array.isArray(value) ? 'an array' : 'an object';
}
