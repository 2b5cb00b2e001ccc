/**
 * The task status machine, declared once. Every status change in taskrail goes through
 * `assertTransition`; stores additionally refuse to overwrite a terminal record.
 */
export const TASK_STATUSES = [
  'working',
  'input_required',
  'completed',
  'failed',
  'cancelled',
] as const;

export type TaskStatus = (typeof TASK_STATUSES)[number];

export type TerminalStatus = 'completed' | 'failed' | 'cancelled';

/** The one transition table: from → the statuses it may move to. Terminal rows are empty. */
export const TRANSITIONS: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = {
  working: ['input_required', 'completed', 'failed', 'cancelled'],
  input_required: ['working', 'completed', 'failed', 'cancelled'],
  completed: [],
  failed: [],
  cancelled: [],
};

export function isTaskStatus(value: unknown): value is TaskStatus {
  return typeof value === 'string' && (TASK_STATUSES as readonly string[]).includes(value);
}

export function isTerminal(status: TaskStatus): status is TerminalStatus {
  return TRANSITIONS[status].length === 0;
}

export function canTransition(from: TaskStatus, to: TaskStatus): boolean {
  return TRANSITIONS[from].includes(to);
}
