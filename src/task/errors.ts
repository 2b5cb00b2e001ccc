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
 * Marks RpcErrors across copies of this package: a user's `--tools` module may resolve its own
 * copy of taskrail, whose class is not ours, so `instanceof` alone would miss its errors.
 */
const RPC_ERROR_BRAND = Symbol.for('taskrail.RpcError');

export class RpcError extends Error {
  readonly code: number;
  readonly data: unknown;
  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = 'RpcError';
    this.code = code;
    this.data = data;
    Object.defineProperty(this, RPC_ERROR_BRAND, { value: true });
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
  | 'CONFIG';

export class TaskrailError extends Error {
  readonly code: TaskrailErrorCode;
  constructor(code: TaskrailErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TaskrailError';
    this.code = code;
  }
}

export function isRpcError(error: unknown): error is RpcError {
  if (error instanceof RpcError) return true;
  if (typeof error !== 'object' || error === null) return false;
  const branded = error as { [RPC_ERROR_BRAND]?: unknown; code?: unknown; message?: unknown };
  return (
    branded[RPC_ERROR_BRAND] === true &&
    Number.isInteger(branded.code) &&
    typeof branded.message === 'string'
  );
}

/** The wire form of any RpcError, from this copy of taskrail or another. */
export function rpcErrorObject(error: RpcError): JsonRpcErrorObject {
  return error.data === undefined
    ? { code: error.code, message: error.message }
    : { code: error.code, message: error.message, data: error.data };
}
