import { pendingInputRequests, type TaskRecord, type TaskWire } from '../../task/record.js';
import { isoTime } from '../../task/time.js';
import { outcomeOf } from '../../task/outcome.js';
import type { TimelineEntry } from './journal.js';

/** One row of the dashboard table. */
export interface TaskSummary {
  id: string;
  status: string;
  /** The status, or `tool_error` for a task that completed with an `isError` result. */
  outcome: string;
  tool: string;
  principal: string;
  statusMessage?: string;
  attempt: number;
  revision: number;
  pendingInput: number;
  createdAt: string;
  updatedAt: string;
}

export interface TaskDetail extends TaskSummary {
  arguments: unknown;
  pendingInputRequests: Record<string, unknown>;
  inputResponses: Record<string, unknown>;
  result?: unknown;
  error?: unknown;
  expiresAt: string | null;
  wire: TaskWire;
  timeline: TimelineEntry[];
  /** `events`: recorded live by this process; `derived`: rebuilt from the record's times. */
  timelineSource: 'events' | 'derived';
}

export function summaryOf(task: TaskRecord): TaskSummary {
  return {
    id: task.id,
    status: task.status,
    outcome: outcomeOf(task),
    tool: task.tool,
    principal: task.principal,
    ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
    attempt: task.attempt,
    revision: task.revision,
    pendingInput: Object.keys(pendingInputRequests(task)).length,
    createdAt: isoTime(task.createdAt),
    updatedAt: isoTime(task.updatedAt),
  };
}

export function detailOf(
  task: TaskRecord,
  timeline: { entries: TimelineEntry[]; source: 'events' | 'derived' },
): TaskDetail {
  return {
    ...summaryOf(task),
    arguments: task.arguments,
    pendingInputRequests: pendingInputRequests(task),
    inputResponses: task.inputResponses,
    ...(task.result === undefined ? {} : { result: task.result }),
    ...(task.error === undefined ? {} : { error: task.error }),
    expiresAt: task.expiresAt === null ? null : isoTime(task.expiresAt),
    wire: task.wire,
    timeline: timeline.entries,
    timelineSource: timeline.source,
  };
}
