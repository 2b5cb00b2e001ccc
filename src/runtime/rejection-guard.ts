import type { Logger } from './api.js';
import { describeError } from './store-health.js';

/**
 * Keeps a long-running process (serve, worker) alive through one stray promise rejection:
 * Node's default would exit, taking every running task with it. The rejection is logged as an
 * error with its stack; tasks are durable, so serving on is the safer choice. Returns the
 * function that removes the guard. Uncaught exceptions are left to crash as before: their
 * state is unknown.
 */
export function installRejectionGuard(logger: Logger): () => void {
  const onRejection = (reason: unknown) => {
    logger.error('unhandled promise rejection (a bug); kept serving', {
      error: describeError(reason),
      ...(reason instanceof Error && reason.stack !== undefined ? { stack: reason.stack } : {}),
    });
  };
  process.on('unhandledRejection', onRejection);
  return () => process.off('unhandledRejection', onRejection);
}
