import type { TaskRecord } from './record.js';
import { isTaskStatus, type TaskStatus } from './status.js';

/**
 * How a task ended as a person reads it: its status, or `tool_error` for a task that completed
 * with an `isError` result (stored `completed` on the 2026-07-28 wire, but the tool's own
 * failure: it must not look, filter or count like a success). The dashboard, `/metrics`,
 * `taskrail admin` and `taskrail tasks list` all tell it apart with this one rule.
 */
export type TaskOutcome = TaskStatus | 'tool_error';

export const TOOL_ERROR = 'tool_error';

export function isTaskOutcome(value: string): value is TaskOutcome {
  return value === TOOL_ERROR || isTaskStatus(value);
}

/** A status shown as an outcome: `completed` with an `isError` result is `tool_error`. */
export function outcomeOfStatus<S extends string>(status: S, isError: boolean): S | 'tool_error' {
  return status === 'completed' && isError ? TOOL_ERROR : status;
}

export function outcomeOf(task: TaskRecord): TaskOutcome {
  return outcomeOfStatus(task.status, task.result?.['isError'] === true);
}

/** A `--status` list as users type it: comma-separated, `tool-error` taken for `tool_error`. */
export function splitOutcomeList(value: string): string[] {
  return value.split(',').map((s) => (s.trim() === 'tool-error' ? TOOL_ERROR : s.trim()));
}
