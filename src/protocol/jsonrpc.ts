import type { JsonObject } from '../task/record.js';
import type { JsonRpcErrorObject } from '../task/errors.js';
import { isObject } from './envelope.js';
import { invalidRequest, type WireError } from './errors.js';

export type RequestId = string | number;

/** A JSON-RPC request as it arrived; params stay unknown until a method looks at them. */
export interface IncomingRequest {
  id: RequestId | undefined;
  method: string;
  params: unknown;
}

/** Shape check only: `jsonrpc: "2.0"`, a string method, an optional string/number id. */
export function readRequest(body: unknown): IncomingRequest | WireError {
  if (!isObject(body)) return invalidRequest('the body must be one JSON-RPC object');
  if (body['jsonrpc'] !== '2.0') return invalidRequest('jsonrpc must be "2.0"');
  const method = body['method'];
  if (typeof method !== 'string') return invalidRequest('method must be a string');
  const id = body['id'];
  if (
    id !== undefined &&
    typeof id !== 'string' &&
    !(typeof id === 'number' && Number.isFinite(id))
  ) {
    return invalidRequest('id must be a string or a number');
  }
  return { id, method, params: body['params'] };
}

export function isIncomingRequest(value: IncomingRequest | WireError): value is IncomingRequest {
  return 'method' in value;
}

/** The request id when the body has a usable one, for error replies; else null. */
export function peekId(body: unknown): RequestId | null {
  if (!isObject(body)) return null;
  const id = body['id'];
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}

export function resultMessage(id: RequestId, result: JsonObject): string {
  return JSON.stringify({ jsonrpc: '2.0', id, result });
}

/** `resultMessage` for a result already serialized: the same bytes. */
export function resultMessageOfJson(id: RequestId, resultJson: string): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${resultJson}}`;
}

export function errorMessage(id: RequestId | null, error: JsonRpcErrorObject): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error });
}
