/**
 * Two error families, as in the MCP SDK:
 * - `RpcError`: an error that belongs on the wire, with a numeric JSON-RPC code. A tool handler
 *   throws one to end its task `failed` with that code and message.
 * - `TaskrailError`: a local error with a string code, for misuse of the library (invalid
 *   transitions, bad configuration, a store that cannot open). Never sent as-is to a client.
 */
export const RPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  HEADER_MISMATCH: -32020,
  MISSING_REQUIRED_CLIENT_CAPABILITY: -32021,
  UNSUPPORTED_PROTOCOL_VERSION: -32022,
} as const;

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/**
 * Marks taskrail's errors across copies of this package, the value naming the class: a user's
 * `--tools` module may resolve its own copy of taskrail, whose classes are not ours, so
 * `instanceof` alone would miss its errors. Both error classes carry it; nothing else does.
 */
const ERROR_BRAND = Symbol.for('taskrail.error');

type ErrorKind = 'RpcError' | 'TaskrailError';

function brand(error: Error, kind: ErrorKind): void {
  Object.defineProperty(error, ERROR_BRAND, { value: kind });
}

/** An error made by `kind`'s class in this copy of taskrail or another. */
function isBranded(error: unknown, kind: ErrorKind): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { [ERROR_BRAND]?: unknown })[ERROR_BRAND] === kind
  );
}

export class RpcError extends Error {
  readonly code: number;
  readonly data: unknown;
  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = 'RpcError';
    this.code = code;
    this.data = data;
    brand(this, 'RpcError');
  }
  toJSON(): JsonRpcErrorObject {
    return rpcErrorObject(this);
  }
}

export type TaskrailErrorCode =
  | 'INVALID_TRANSITION'
  | 'TASK_NOT_FOUND'
  | 'TASK_TERMINAL'
  | 'CONFLICT'
  | 'TOO_LARGE'
  | 'INVALID_ARGUMENT'
  | 'INPUT_KEY_REUSED'
  | 'STORE_UNAVAILABLE'
  | 'STORE_CORRUPT'
  /** A create refused by `CreateOptions.maxUnfinished`: its principal has that many unfinished. */
  | 'QUEUE_FULL'
  | 'CONFIG';

export class TaskrailError extends Error {
  readonly code: TaskrailErrorCode;
  constructor(code: TaskrailErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TaskrailError';
    this.code = code;
    brand(this, 'TaskrailError');
  }
}

export function isRpcError(error: unknown): error is RpcError {
  if (error instanceof RpcError) return true;
  if (!isBranded(error, 'RpcError')) return false;
  const branded = error as { code?: unknown; message?: unknown };
  return Number.isInteger(branded.code) && typeof branded.message === 'string';
}

/** The wire form of any RpcError, from this copy of taskrail or another. */
export function rpcErrorObject(error: RpcError): JsonRpcErrorObject {
  return error.data === undefined
    ? { code: error.code, message: error.message }
    : { code: error.code, message: error.message, data: error.data };
}

/**
 * True for a store that could not do its work for now (locked, full, unreachable, read-only):
 * the operation may succeed later, and the caller should neither report it as the tool's
 * failure nor show its detail (kept in `cause`) to a client. The server maps it to HTTP 503.
 */
export function isStoreUnavailable(error: unknown): error is TaskrailError {
  return isTaskrailError(error) && error.code === 'STORE_UNAVAILABLE';
}

/** A TaskrailError from this copy of taskrail or another (see ERROR_BRAND). */
export function isTaskrailError(error: unknown): error is TaskrailError {
  return error instanceof TaskrailError || isBranded(error, 'TaskrailError');
}

/**
 * An error a tool threw that belongs on the wire as is: taskrail's RpcError (any copy) or the
 * MCP SDK's ProtocolError (and subclasses) or SDK v1's McpError, recognised by duck typing: another
 * copy of the SDK has other classes. An integer `code` in the JSON-RPC range, or any integer
 * code on an error named like the SDK's, qualifies; Node's system errors have string codes.
 */
export function protocolErrorObject(error: unknown): JsonRpcErrorObject | undefined {
  if (isRpcError(error)) return rpcErrorObject(error);
  if (!(error instanceof Error)) return undefined;
  const { code, data } = error as Error & { code?: unknown; data?: unknown };
  if (typeof code !== 'number' || !Number.isInteger(code)) return undefined;
  const jsonRpcRange = code >= -32768 && code <= -32000;
  if (!jsonRpcRange && !/ProtocolError|McpError/.test(error.name)) return undefined;
  const message = error.message.replace(/^MCP error -?\d+: /, '');
  return data === undefined ? { code, message } : { code, message, data };
}
