import { TaskrailError } from '../../task/errors.js';

/**
 * SQLSTATE classes that mean the database is out of reach or refusing work for now, rather
 * than that the statement was wrong: connection exceptions (08), operator intervention such as
 * a shutdown (57P), too many connections (53300), and the server being in recovery (57P03).
 */
function isUnavailableCode(code: string): boolean {
  return code.startsWith('08') || code.startsWith('57P') || code === '53300';
}

/** Node socket errors and node-postgres's own messages when a connection dies or times out. */
const CONNECTION_MESSAGE =
  /ECONNREFUSED|ECONNRESET|ENOTFOUND|ETIMEDOUT|EPIPE|EHOSTUNREACH|Connection terminated|connection timeout|Client has encountered a connection error|not queryable|Cannot use a pool after calling end/i;

/** True for errors that say "the database cannot be reached", not "the query was wrong". */
export function isConnectionError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return isUnavailableCode(code);
  return CONNECTION_MESSAGE.test(String((error as { message?: unknown }).message));
}

/** Connection trouble becomes STORE_UNAVAILABLE (the runtime retries those); the rest passes. */
export function storeError(error: unknown, description: string): unknown {
  if (error instanceof TaskrailError || !isConnectionError(error)) return error;
  return new TaskrailError(
    'STORE_UNAVAILABLE',
    `${description} is unreachable: ${(error as Error).message}`,
    { cause: error },
  );
}

/** The unique constraint a 23505 error names, if it is one. */
export function uniqueViolation(error: unknown): string | undefined {
  const { code, constraint } = error as { code?: unknown; constraint?: unknown };
  return code === '23505' && typeof constraint === 'string' ? constraint : undefined;
}
