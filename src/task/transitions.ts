import { TaskrailError, type JsonRpcErrorObject } from './errors.js';
import type { InputRequest, JsonObject, TaskRecord } from './record.js';
import { merged } from './copy.js';
import { canTransition, isTerminal, type TaskStatus } from './status.js';

/**
 * Pure functions from a task to its next version. Each asserts its preconditions against the
 * one transition table and bumps the revision; the store then writes the result with a
 * compare-and-set on the previous revision.
 */

function assertTransition(task: TaskRecord, to: TaskStatus): void {
  if (!canTransition(task.status, to)) {
    throw new TaskrailError(
      isTerminal(task.status) ? 'TASK_TERMINAL' : 'INVALID_TRANSITION',
      `task ${task.id}: cannot move from '${task.status}' to '${to}'`,
    );
  }
}

function assertNotTerminal(task: TaskRecord): void {
  if (isTerminal(task.status)) {
    throw new TaskrailError('TASK_TERMINAL', `task ${task.id} is already '${task.status}'`);
  }
}

function next(task: TaskRecord, now: number, changes: Partial<TaskRecord>): TaskRecord {
  // `{ ...task, ...changes, updatedAt, revision }`, without the spread's slow path (copy.ts).
  const record = merged(task, changes);
  record.updatedAt = Math.max(now, task.updatedAt);
  record.revision = task.revision + 1;
  return record;
}

/** Clears a progress message or question that no longer describes the task. */
function withoutStatusMessage(task: TaskRecord): TaskRecord {
  // Callers pass a fresh copy; the rest-copy below is V8's slow path, so only when needed.
  if (!('statusMessage' in task)) return task;
  const { statusMessage: _stale, ...rest } = task;
  return rest;
}

/** The result speaks for itself: a last progress line ("writing 3/4") would be stale. */
export function complete(task: TaskRecord, result: JsonObject, now: number): TaskRecord {
  assertTransition(task, 'completed');
  return withoutStatusMessage(next(task, now, { status: 'completed', result }));
}

export function fail(
  task: TaskRecord,
  error: JsonRpcErrorObject,
  now: number,
  statusMessage?: string,
): TaskRecord {
  assertTransition(task, 'failed');
  const message = statusMessage ?? error.message;
  return next(task, now, { status: 'failed', error, statusMessage: message });
}

export function cancel(
  task: TaskRecord,
  now: number,
  statusMessage = 'Cancelled by request.',
): TaskRecord {
  assertTransition(task, 'cancelled');
  return next(task, now, { status: 'cancelled', statusMessage });
}

/** A progress report: same status, new message. */
export function report(task: TaskRecord, statusMessage: string, now: number): TaskRecord {
  assertNotTerminal(task);
  return next(task, now, { statusMessage });
}

/**
 * Ask the client for input. Keys already issued with the same request are kept (a re-run asks
 * again); a key issued before with a different request is refused, since keys are unique for
 * the task's life.
 */
export function requestInput(
  task: TaskRecord,
  requests: Record<string, InputRequest>,
  now: number,
  statusMessage?: string,
): TaskRecord {
  for (const [key, request] of Object.entries(requests)) {
    const earlier = task.inputRequests[key];
    if (earlier !== undefined && JSON.stringify(earlier) !== JSON.stringify(request)) {
      throw new TaskrailError(
        'INPUT_KEY_REUSED',
        `task ${task.id}: input key '${key}' was already used for a different request`,
      );
    }
  }
  const inputRequests = { ...task.inputRequests, ...requests };
  const stillPending = Object.keys(requests).some((key) => !(key in task.inputResponses));
  if (!stillPending) return task;
  assertTransition(task, 'input_required');
  return next(task, now, {
    status: 'input_required',
    inputRequests,
    ...(statusMessage === undefined ? {} : { statusMessage }),
  });
}

export interface AnswerOutcome {
  task: TaskRecord;
  /** Keys whose answers were recorded by this call. */
  accepted: string[];
  /** True when the last pending key was answered and the task went back to `working`. */
  resumed: boolean;
}

/**
 * Record answers. Only pending keys are taken; unknown or already-answered keys are ignored.
 * When nothing is pending any more the task goes back to `working`.
 */
export function answerInput(
  task: TaskRecord,
  responses: Record<string, JsonObject>,
  now: number,
): AnswerOutcome {
  if (task.status !== 'input_required') return { task, accepted: [], resumed: false };
  const accepted = Object.keys(responses).filter(
    (key) => key in task.inputRequests && !(key in task.inputResponses),
  );
  if (accepted.length === 0) return { task, accepted, resumed: false };
  const inputResponses = { ...task.inputResponses };
  for (const key of accepted) inputResponses[key] = responses[key] as JsonObject;
  const resumed = Object.keys(task.inputRequests).every((key) => key in inputResponses);
  const changes: Partial<TaskRecord> = { inputResponses };
  if (!resumed) return { task: next(task, now, changes), accepted, resumed };
  // The question ("Delete notes.txt?") is answered; it no longer describes the task.
  const working = withoutStatusMessage(next(task, now, { ...changes, status: 'working' }));
  return { task: working, accepted, resumed };
}

/** A re-run after a crash: a new attempt of the same task. */
export function retry(task: TaskRecord, now: number): TaskRecord {
  if (task.status !== 'working') {
    throw new TaskrailError('INVALID_TRANSITION', `task ${task.id}: only a working task is re-run`);
  }
  return next(task, now, { attempt: task.attempt + 1 });
}

/**
 * A durable wait (a retry's backoff, a sleep): still `working`, its status message saying what
 * it waits for; a retry also moves the task to the attempt that runs after the wait.
 */
export function wait(
  task: TaskRecord,
  statusMessage: string,
  now: number,
  attempt = task.attempt,
): TaskRecord {
  if (task.status !== 'working') {
    throw new TaskrailError('INVALID_TRANSITION', `task ${task.id}: only a working task waits`);
  }
  return next(task, now, { statusMessage, attempt });
}
