import type { TaskEvents } from '../store/events.js';
import type { TaskRecord } from '../task/record.js';
import type { Logger } from './api.js';

/**
 * One `info` line per task creation and status change this process learns of: its own writes,
 * and with a shared Redis or Postgres store those of other processes too (each replica logs what
 * it sees).
 * Nothing is registered when the logger drops `info` records: listening would make a shared
 * store read back every other process's writes only to build lines nobody keeps.
 */
export function logTransitions(events: TaskEvents, logger: Logger): () => void {
  if (logger.enabled?.('info') === false) return () => undefined;
  const offCreated = events.on('task:created', ({ task }) => {
    logger.info('task created', { ...identity(task), status: task.status });
  });
  const offTransition = events.on('task:transition', ({ task, from, to }) => {
    logger.info('task transition', {
      ...identity(task),
      from,
      to,
      ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
      ...(task.error === undefined ? {} : { error: task.error.message }),
    });
  });
  return () => {
    offCreated();
    offTransition();
  };
}

function identity(task: TaskRecord): { taskId: string; tool: string; principal: string } {
  return { taskId: task.id, tool: task.tool, principal: task.principal };
}
