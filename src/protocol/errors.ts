import { RPC, type JsonRpcErrorObject } from '../task/errors.js';
import { SUPPORTED_WIRE_2026_VERSIONS, TASKS_EXTENSION } from './constants.js';

/**
 * A JSON-RPC error with the HTTP status the 2026-07-28 Streamable HTTP transport requires
 * for it. Client mistakes are always 4xx (or 200 for in-band errors), never 5xx.
 */
export interface WireError {
  httpStatus: number;
  error: JsonRpcErrorObject;
}

function wire(httpStatus: number, code: number, message: string, data?: unknown): WireError {
  return { httpStatus, error: data === undefined ? { code, message } : { code, message, data } };
}

export function parseError(detail = 'Parse error'): WireError {
  return wire(400, RPC.PARSE_ERROR, detail);
}

export function invalidRequest(detail: string): WireError {
  return wire(400, RPC.INVALID_REQUEST, `Invalid request: ${detail}`);
}

export function methodNotFound(method: string): WireError {
  return wire(404, RPC.METHOD_NOT_FOUND, `Method not found: ${method}`);
}

/** -32602 for a malformed request (missing `_meta` fields, wrong param types): HTTP 400. */
export function invalidParams(detail: string): WireError {
  return wire(400, RPC.INVALID_PARAMS, `Invalid params: ${detail}`);
}

/** -32602 for an unknown, expired or foreign task: the same answer for all three, in band. */
export function taskNotFound(): WireError {
  return wire(200, RPC.INVALID_PARAMS, 'Failed to retrieve task: Task not found');
}

export function headerMismatch(detail: string): WireError {
  return wire(400, RPC.HEADER_MISMATCH, `Header mismatch: ${detail}`);
}

export function missingTasksCapability(): WireError {
  return missingCapability({ extensions: { [TASKS_EXTENSION]: {} } });
}

/** -32021 naming the missing capabilities as a ClientCapabilities object. */
export function missingCapability(requiredCapabilities: Record<string, unknown>): WireError {
  return wire(400, RPC.MISSING_REQUIRED_CLIENT_CAPABILITY, 'Missing required client capability', {
    requiredCapabilities,
  });
}

export function unsupportedProtocolVersion(requested: unknown): WireError {
  return wire(400, RPC.UNSUPPORTED_PROTOCOL_VERSION, 'Unsupported protocol version', {
    supported: [...SUPPORTED_WIRE_2026_VERSIONS],
    requested,
  });
}

export function internalError(): WireError {
  return wire(500, RPC.INTERNAL_ERROR, 'Internal error');
}
