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

/** Node's socket errors: the connection to the database could not be made or was lost. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ENOTFOUND',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'EAI_AGAIN',
]);

/**
 * Every connection-level failure the drivers raise without a SQLSTATE (the server never
 * answered), by the driver that raises it. Each is the database being unreachable; none is the
 * statement's fault. test/postgres/postgres-connection-errors.test.ts produces each for real.
 */
const CONNECTION_FAILURES: readonly { driver: string; message: RegExp }[] = [
  // A pool with every client busy or connecting, for longer than `connectionTimeoutMillis`.
  { driver: 'pg-pool', message: /^timeout exceeded when trying to connect/ },
  // A new client that did not finish connecting within `connectionTimeoutMillis`.
  { driver: 'pg-pool', message: /^Connection terminated due to connection timeout/ },
  { driver: 'pg-pool', message: /^Cannot use a pool after calling end on the pool/ },
  // The socket closed under a client ('Connection terminated' when it was ending anyway).
  { driver: 'pg', message: /^Connection terminated( unexpectedly)?/ },
  { driver: 'pg', message: /^Client has encountered a connection error and is not queryable/ },
  { driver: 'pg', message: /^Client was closed and is not queryable/ },
  { driver: 'pg', message: /^Query read timeout/ },
  { driver: 'pg', message: /^timeout expired/ },
];

/** A failure to reach the database, whichever driver layer noticed it. */
export function isConnectionFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && SOCKET_CODES.has(code)) return true;
  if (CONNECTION_FAILURES.some(({ message }) => message.test(error.message))) return true;
  // AggregateError (several addresses refused) and wrapped errors: judge what they carry.
  const inner = error instanceof AggregateError ? error.errors : [error.cause];
  return inner.some((cause) => cause !== undefined && isConnectionFailure(cause));
}

/** Why the database cannot do the work now, or undefined when the error is the statement's. */
function troubleReason(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return unavailableReason(code);
  return isConnectionFailure(error) ? 'is unreachable' : undefined;
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
