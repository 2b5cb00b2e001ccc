import { TaskrailError } from '../../task/errors.js';

/**
 * SQLSTATEs that mean the database cannot do the work right now, rather than that the statement
 * was wrong, each with what to tell the log: connection exceptions (08), insufficient resources
 * such as a full disk or too many connections (53), operator intervention such as a shutdown or
 * a statement timeout (57), a lock wait that timed out (55P03), a system I/O error (58), and a
 * transaction rolled back by a serialization failure or deadlock (40001, 40P01). The runtime
 * retries all of them; none is a caller's mistake.
 */
function unavailableReason(code: string): string | undefined {
  if (code.startsWith('08')) return 'is unreachable';
  if (code.startsWith('53')) return 'is out of resources (disk, memory or connections)';
  if (code.startsWith('57')) return 'refused the statement (shutdown, recovery or timeout)';
  if (code === '55P03') return 'timed out waiting for a lock';
  if (code.startsWith('58')) return 'reported a system error';
  if (code === '40001' || code === '40P01') return 'rolled the statement back (conflict)';
  return undefined;
}

/** Node socket errors and node-postgres's own messages when a connection dies or times out. */
const CONNECTION_MESSAGE =
  /ECONNREFUSED|ECONNRESET|ENOTFOUND|ETIMEDOUT|EPIPE|EHOSTUNREACH|Connection terminated|connection timeout|Client has encountered a connection error|not queryable|Cannot use a pool after calling end/i;

/** Why the database cannot do the work now, or undefined when the error is the statement's. */
function troubleReason(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return unavailableReason(code);
  const message = String((error as { message?: unknown }).message);
  return CONNECTION_MESSAGE.test(message) ? 'is unreachable' : undefined;
}

/** Database trouble becomes STORE_UNAVAILABLE (the runtime retries those); the rest passes. */
export function storeError(error: unknown, description: string): unknown {
  if (error instanceof TaskrailError) return error;
  const reason = troubleReason(error);
  if (reason === undefined) return error;
  return new TaskrailError(
    'STORE_UNAVAILABLE',
    `${description} ${reason}: ${(error as Error).message}`,
    { cause: error },
  );
}

/** The unique constraint a 23505 error names, if it is one. */
export function uniqueViolation(error: unknown): string | undefined {
  const { code, constraint } = error as { code?: unknown; constraint?: unknown };
  return code === '23505' && typeof constraint === 'string' ? constraint : undefined;
}
