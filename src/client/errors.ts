/**
 * Local errors of the host client, with string codes. Wire errors (JSON-RPC codes) never become
 * exceptions here: they end up as a `failed` or `lost` outcome instead; except the server's own
 * store trouble (a retryable `-32603`, HTTP 503), which says nothing about the call.
 */
export type ClientErrorCode =
  /**
   * The server could not be reached, answered something that is not JSON-RPC, or could not
   * reach its own task store (a retryable 503 that outlasted `connectionGraceMs`).
   */
  | 'CONNECTION'
  /** HTTP 401/403: the bearer token is missing or wrong. */
  | 'UNAUTHORIZED'
  /** The server sent a reply that breaks the 2026-07-28 / tasks extension wire. */
  | 'PROTOCOL'
  /** A task needs input and no handler can answer it (e.g. stdin is not a terminal). */
  | 'INPUT_UNAVAILABLE'
  /**
   * The ledger has no such task; or the server does not know it under credentials other than
   * the ones it was created with (the ledger entry is kept: that "not found" says nothing).
   */
  | 'NOT_FOUND'
  | 'USAGE';

export class TaskrailClientError extends Error {
  readonly code: ClientErrorCode;
  /** On `UNAUTHORIZED` from an OAuth server: its RFC 9728 metadata URL (where to get a token). */
  readonly resourceMetadata?: string;
  constructor(
    code: ClientErrorCode,
    message: string,
    options?: { cause?: unknown; resourceMetadata?: string | undefined },
  ) {
    super(message, options);
    this.name = 'TaskrailClientError';
    this.code = code;
    if (options?.resourceMetadata !== undefined) this.resourceMetadata = options.resourceMetadata;
  }
}

function challengeParam(header: string, name: string): string | undefined {
  const match = new RegExp(`(?:^|[\\s,])${name}="((?:[^"\\\\]|\\\\.)*)"`, 'i').exec(header);
  return match?.[1]?.replace(/\\(.)/g, '$1');
}

/** The error for an HTTP 401/403, naming what the `WWW-Authenticate` challenge says. */
export function unauthorizedError(
  url: string,
  status: number,
  challenge: string | null | undefined,
): TaskrailClientError {
  const header = challenge ?? '';
  const error = challengeParam(header, 'error');
  const description = challengeParam(header, 'error_description');
  const resourceMetadata = challengeParam(header, 'resource_metadata');
  const why =
    error === undefined ? '' : ` (${error}${description === undefined ? '' : `: ${description}`})`;
  const what =
    status === 403 && error === 'insufficient_scope'
      ? `the token lacks the scope ${challengeParam(header, 'scope') ?? 'it needs'}`
      : 'check the bearer token (--bearer or TASKRAIL_BEARER)';
  const where =
    resourceMetadata === undefined ? '' : `; get a token as described at ${resourceMetadata}`;
  return new TaskrailClientError(
    'UNAUTHORIZED',
    `${url} answered HTTP ${status}${why}: ${what}${where}`,
    { resourceMetadata },
  );
}

export function isClientError(
  error: unknown,
  code?: ClientErrorCode,
): error is TaskrailClientError {
  return error instanceof TaskrailClientError && (code === undefined || error.code === code);
}

/**
 * A `tools/call` the server answered with its store trouble until the grace ran out: the call
 * has no outcome yet (a keyed one stays pending for `resume()`), so it is never reported as the
 * tool's failure.
 */
export function serverTroubleError(url: string, message: string): TaskrailClientError {
  return new TaskrailClientError(
    'CONNECTION',
    `${url} cannot reach its task store right now (${message}); try the call again later`,
  );
}

/**
 * A server's "not found" for a task asked about with credentials other than its own: another
 * principal gets the same answer as for a task that never existed, so the task is not lost.
 */
export function unknownUnderCredentialsError(url: string, taskId: string): TaskrailClientError {
  return new TaskrailClientError(
    'NOT_FOUND',
    `${url} does not know task ${taskId} under these credentials, which are not the ones it ` +
      'was created with; the ledger keeps it. Use the token it was created with ' +
      '(without --bearer/TASKRAIL_BEARER the saved one is used)',
  );
}
