import type { JsonObject, TaskRecord } from './record.js';
import { answerInput } from './transitions.js';

/** Where a withdrawn question's recorded response keeps the reason. */
const WITHDRAWN = 'io.taskrail/withdrawn';

/**
 * The response recorded for a question its asker withdrew before anyone answered it (an
 * upstream server whose own request timed out): the question is no longer pending, and a
 * late answer to it is refused instead of being taken for one the asker still waits for.
 */
export function withdrawnResponse(reason: string): JsonObject {
  return { action: 'cancel', _meta: { [WITHDRAWN]: reason } };
}

/** Why the question answered by `response` was withdrawn; undefined for a real answer. */
export function withdrawalReason(response: unknown): string | undefined {
  if (typeof response !== 'object' || response === null) return undefined;
  const meta = (response as JsonObject)['_meta'];
  if (typeof meta !== 'object' || meta === null) return undefined;
  const reason = (meta as JsonObject)[WITHDRAWN];
  return typeof reason === 'string' ? reason : undefined;
}

/**
 * Withdraws the pending questions in `reasons` (key → why): recorded as withdrawn, the task
 * goes back to `working` once nothing else is pending, and its statusMessage says why.
 * The task as it was when none of them is pending.
 */
export function withdrawQuestions(
  task: TaskRecord,
  reasons: Record<string, string>,
  now: number,
): TaskRecord {
  const responses: Record<string, JsonObject> = {};
  for (const [key, reason] of Object.entries(reasons)) responses[key] = withdrawnResponse(reason);
  const outcome = answerInput(task, responses, now);
  if (outcome.accepted.length === 0) return task;
  const why = outcome.accepted.map((key) => reasons[key]).join('; ');
  return { ...outcome.task, statusMessage: `The question was withdrawn: ${why}` };
}
