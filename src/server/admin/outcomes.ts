import type { ListQuery, TaskStore } from '../../store/port.js';
import type { TaskRecord } from '../../task/record.js';
import { outcomeOf, TOOL_ERROR, type TaskOutcome } from '../../task/outcome.js';
import type { TaskStatus } from '../../task/status.js';

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
