import type { ListQuery, TaskStore } from '../../store/port.js';
import type { TaskRecord } from '../../task/record.js';
import { isTaskStatus, type TaskStatus } from '../../task/status.js';

/**
 * How a task ended as an operator reads it: its status, or `tool_error` for a task that
 * completed with an `isError` result (stored `completed` on the 2026-07-28 wire, but the
 * tool's own failure: it must not look, filter or count like a success).
 */
export type TaskOutcome = TaskStatus | 'tool_error';

export const TOOL_ERROR = 'tool_error';

export function isTaskOutcome(value: string): value is TaskOutcome {
  return value === TOOL_ERROR || isTaskStatus(value);
}

export function outcomeOf(task: TaskRecord): TaskOutcome {
  return task.status === 'completed' && task.result?.['isError'] === true
    ? TOOL_ERROR
    : task.status;
}

/** A list filtered past what the store can filter scans this many tasks at most. */
export const OUTCOME_SCAN_LIMIT = 100_000;

export interface OutcomeListQuery extends Omit<ListQuery, 'statuses' | 'limit'> {
  outcomes?: readonly TaskOutcome[];
  limit: number;
}

/**
 * One page of tasks by outcome. The store filters by status; `completed` versus `tool_error`
 * is told apart here, reading further pages until `limit` tasks match (or the scan limit).
 */
export async function listByOutcome(
  store: TaskStore,
  query: OutcomeListQuery,
): Promise<{ tasks: TaskRecord[]; nextCursor?: string }> {
  const wanted = query.outcomes === undefined ? undefined : new Set(query.outcomes);
  const statuses = new Set(
    [...(wanted ?? [])].map((s): TaskStatus => (s === TOOL_ERROR ? 'completed' : s)),
  );
  const tasks: TaskRecord[] = [];
  let cursor = query.cursor;
  let scanned = 0;
  do {
    const page: ListQuery = { limit: Math.min(1000, query.limit - tasks.length) };
    if (statuses.size > 0) page.statuses = [...statuses];
    if (query.tool !== undefined) page.tool = query.tool;
    if (query.principal !== undefined) page.principal = query.principal;
    if (cursor !== undefined) page.cursor = cursor;
    const found = await store.list(page);
    tasks.push(...found.tasks.filter((task) => wanted?.has(outcomeOf(task)) ?? true));
    scanned += found.tasks.length;
    cursor = found.nextCursor;
  } while (cursor !== undefined && tasks.length < query.limit && scanned < OUTCOME_SCAN_LIMIT);
  return cursor === undefined ? { tasks } : { tasks, nextCursor: cursor };
}
