import type { CallOutcome, TaskrailClient } from '../client/index.js';
import type { SigintRouter } from './host-output.js';
import type { ProgressLine } from './host-progress.js';

/** A `--fallback-tools` handle: the task id and the tool to call next. */
export interface FallbackHandle {
  taskId: string;
  next: string;
  statusMessage?: string;
}

/** The handle a server without tasks answered with past its inline wait, if this is one. */
export function handleOf(outcome: CallOutcome): FallbackHandle | undefined {
  if (outcome.kind !== 'completed') return undefined;
  const structured = outcome.result.structuredContent;
  if (structured === undefined || structured === null) return undefined;
  const { taskId, next, statusMessage } = structured as Record<string, unknown>;
  if (typeof taskId !== 'string' || typeof next !== 'string') return undefined;
  return {
    taskId,
    next,
    ...(typeof statusMessage === 'string' ? { statusMessage } : {}),
  };
}

/**
 * Follows a handle the way a model would: `task_result` until it stops answering "still
 * running". Ctrl-C calls `task_cancel` once, a second one stops waiting (the task keeps going).
 * A task that needs input ends the command with the handle printed: this host cannot answer.
 */
export async function followHandle(
  client: TaskrailClient,
  first: CallOutcome,
  progress: ProgressLine,
  sigint: SigintRouter,
): Promise<CallOutcome> {
  let outcome = first;
  let handle = handleOf(outcome);
  let interrupts = 0;
  const interrupted = new AbortController();
  sigint.route(() => {
    interrupts += 1;
    if (interrupts > 1) process.exit(4);
    interrupted.abort();
    if (handle !== undefined) {
      progress.note(`cancelling task ${handle.taskId} (task_cancel)…`);
      client.callTool('task_cancel', { taskId: handle.taskId }).catch(() => undefined);
    }
  });
  while (handle !== undefined && handle.next === 'task_result') {
    const message = handle.statusMessage === undefined ? '' : ` (${handle.statusMessage})`;
    progress.note(`task ${handle.taskId} is still running${message}; asking task_result…`);
    const call = await client.callTool('task_result', { taskId: handle.taskId });
    outcome = call.outcome ?? (await call.result());
    handle = handleOf(outcome);
  }
  progress.stop();
  return outcome;
}
