import { traced } from '../../runtime/tracing.js';
import type { TaskRuntimePort } from './runtime-port.js';

/**
 * The runtime face with an OpenTelemetry span around task creation and each `tasks/*` call
 * (`tasks/get` → getTask, `tasks/update` → answerInput, `tasks/cancel` → cancelTask).
 * No-op spans unless the user's app registered a tracer provider.
 */
export function tracedRuntime(runtime: TaskRuntimePort): TaskRuntimePort {
  return {
    createTask: (input) =>
      traced('taskrail.task.create', { 'taskrail.tool': input.tool }, async (span) => {
        const task = await runtime.createTask(input);
        span.setAttribute('taskrail.task_id', task.id);
        return task;
      }),
    getTask: (id, principal) =>
      traced('tasks/get', { 'taskrail.task_id': id }, () => runtime.getTask(id, principal)),
    answerInput: (id, principal, responses) =>
      traced('tasks/update', { 'taskrail.task_id': id }, () =>
        runtime.answerInput(id, principal, responses),
      ),
    cancelTask: (id, principal) =>
      traced('tasks/cancel', { 'taskrail.task_id': id }, () => runtime.cancelTask(id, principal)),
    runInline: (input) => runtime.runInline(input),
    waitForSettled: (id, principal, options) => runtime.waitForSettled(id, principal, options),
    start: () => runtime.start(),
    stop: (graceMs) => runtime.stop(graceMs),
  };
}
