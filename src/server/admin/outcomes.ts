import type { ListQuery, TaskStore } from '../../store/port.js';
import type { TaskRecord } from '../../task/record.js';
import { outcomeOf, TOOL_ERROR, type TaskOutcome } from '../../task/outcome.js';
import { runViewOf, type WaitKind } from '../../task/run-meta.js';
import type { TaskStatus } from '../../task/status.js';

/** A list filtered past what the store can filter scans this many tasks at most. */
export const OUTCOME_SCAN_LIMIT = 100_000;

export interface OutcomeListQuery extends Omit<ListQuery, 'statuses' | 'limit'> {
  outcomes?: readonly TaskOutcome[];
  /** Only working tasks in one of these durable waits (see `runViewOf`). */
  waiting?: readonly WaitKind[];
  limit: number;
}

/**
 * One page of tasks by outcome (and wait). The store filters by status; `completed` versus
 * `tool_error`, and the kind of wait, are told apart here, reading further pages until `limit`
 * tasks match (or the scan limit).
 */
export async function listByOutcome(
  store: TaskStore,
  query: OutcomeListQuery,
): Promise<{ tasks: TaskRecord[]; nextCursor?: string }> {
  const wanted = wantedOutcomes(query);
  const statuses = new Set(
    [...(wanted ?? [])].map((s): TaskStatus => (s === TOOL_ERROR ? 'completed' : s)),
  );
  if (wanted?.size === 0) return { tasks: [] };
  const matches = matcher(wanted, query.waiting);
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
    tasks.push(...found.tasks.filter(matches));
    scanned += found.tasks.length;
    cursor = found.nextCursor;
  } while (cursor !== undefined && tasks.length < query.limit && scanned < OUTCOME_SCAN_LIMIT);
  return cursor === undefined ? { tasks } : { tasks, nextCursor: cursor };
}

/** A wait filter narrows to `working` (and to nothing when the outcomes leave it out). */
function wantedOutcomes(query: OutcomeListQuery): Set<TaskOutcome> | undefined {
  if (query.waiting === undefined) {
    return query.outcomes === undefined ? undefined : new Set(query.outcomes);
  }
  const live = query.outcomes === undefined || query.outcomes.includes('working');
  return new Set<TaskOutcome>(live ? ['working'] : []);
}

function matcher(
  wanted: Set<TaskOutcome> | undefined,
  waiting: readonly WaitKind[] | undefined,
): (task: TaskRecord) => boolean {
  const now = Date.now();
  return (task) => {
    if (wanted !== undefined && !wanted.has(outcomeOf(task))) return false;
    if (waiting === undefined) return true;
    const kind = runViewOf(task, now).waiting?.kind;
    return kind !== undefined && waiting.includes(kind);
  };
}
