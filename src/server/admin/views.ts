import { pendingInputRequests, type TaskRecord, type TaskWire } from '../../task/record.js';
import { isoTime } from '../../task/time.js';
import { outcomeOf } from '../../task/outcome.js';
import { runViewOf, type WaitKind, type WaitView } from '../../task/run-meta.js';
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
  /** The attempts the tool allows (1 for `retry: false`); absent on tasks from before it was kept. */
  maxAttempts?: number;
  /** A durable wait the task is in: a retry's backoff, `ctx.sleep`, or a concurrency permit. */
  waiting?: WaitSummary;
  revision: number;
  pendingInput: number;
  createdAt: string;
  updatedAt: string;
}

export interface WaitSummary {
  kind: WaitKind;
  /** When the wait ends (backoff, sleep), ISO 8601 on the store's clock. */
  until?: string;
  /** The wake time has passed: the task is due to run or has just been claimed. */
  due: boolean;
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

/** `now`: the time `due` is judged at (the list passes one for all rows). */
export function summaryOf(task: TaskRecord, now = Date.now()): TaskSummary {
  return {
    id: task.id,
    status: task.status,
    outcome: outcomeOf(task),
    tool: task.tool,
    principal: task.principal,
    ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
    attempt: task.attempt,
    ...runFieldsOf(task, now),
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

/** The run-policy fields of a summary: `maxAttempts` and `waiting`, when known. */
export function runFieldsOf(
  task: TaskRecord,
  now: number,
): Pick<TaskSummary, 'maxAttempts' | 'waiting'> {
  const run = runViewOf(task, now);
  return {
    ...(run.maxAttempts === undefined ? {} : { maxAttempts: run.maxAttempts }),
    ...(run.waiting === undefined ? {} : { waiting: waitSummaryOf(run.waiting) }),
  };
}

function waitSummaryOf(wait: WaitView): WaitSummary {
  return {
    kind: wait.kind,
    ...(wait.until === undefined ? {} : { until: isoTime(wait.until) }),
    due: wait.due,
  };
}
