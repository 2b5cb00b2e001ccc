/**
 * Local errors of the host client, with string codes. Wire errors (JSON-RPC codes) never become
 * exceptions here: they end up as a `failed` or `lost` outcome instead.
 */
export type ClientErrorCode =
  /** The server could not be reached, or answered something that is not JSON-RPC. */
  | 'CONNECTION'
  /** HTTP 401/403: the bearer token is missing or wrong. */
  | 'UNAUTHORIZED'
  /** The server sent a reply that breaks the 2026-07-28 / tasks extension wire. */
  | 'PROTOCOL'
  /** A task needs input and no handler can answer it (e.g. stdin is not a terminal). */
  | 'INPUT_UNAVAILABLE'
  /** The ledger has no such task, or the caller misused the API. */
  | 'NOT_FOUND'
  | 'USAGE';

export class TaskrailClientError extends Error {
  readonly code: ClientErrorCode;
  constructor(code: ClientErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TaskrailClientError';
    this.code = code;
  }
}

export function isClientError(
  error: unknown,
  code?: ClientErrorCode,
): error is TaskrailClientError {
  return error instanceof TaskrailClientError && (code === undefined || error.code === code);
}
