import { ProtocolError } from '@modelcontextprotocol/server';
import { RPC, TaskrailError, isRpcError } from '../../task/errors.js';
import type { WireError } from '../../protocol/index.js';
import {
  isServerTrouble,
  SERVER_TROUBLE_STATUS,
  isStoreTrouble,
  troubleProtocolError,
  type TroubleReporter,
} from '../tasks/server-trouble.js';

/**
 * Errors thrown into the SDK must be ProtocolErrors, or the client only sees "Internal error".
 * `signal`: the request's; once the client has cancelled it, what the work threw is that abort
 * (its reason may be any value, the cancel notification's text), never store trouble.
 */
export function asProtocolError(
  error: unknown,
  trouble?: TroubleReporter,
  signal?: AbortSignal,
): unknown {
  if (isServerTrouble(error)) return troubleProtocolError();
  if (signal?.aborted === true) {
    trouble?.clientAborted('session request');
    return error;
  }
  if (trouble !== undefined && isStoreTrouble(error)) {
    trouble.report(error, 'session request');
    return troubleProtocolError();
  }
  if (isRpcError(error)) return new ProtocolError(error.code, error.message, error.data);
  if (error instanceof TaskrailError && error.code === 'INVALID_ARGUMENT') {
    return new ProtocolError(RPC.INVALID_PARAMS, error.message);
  }
  return error;
}

export function invalidParams(message: string): ProtocolError {
  return new ProtocolError(RPC.INVALID_PARAMS, message);
}

export function methodNotFound(message: string): ProtocolError {
  return new ProtocolError(RPC.METHOD_NOT_FOUND, message);
}

/** Unknown, expired and foreign tasks get the same answer (A.15 / A.16). */
export function taskNotFound(): ProtocolError {
  return invalidParams('Failed to retrieve task: Task not found');
}

export async function rethrowing<T>(
  work: () => Promise<T>,
  trouble?: TroubleReporter,
  signal?: AbortSignal,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw asProtocolError(error, trouble, signal);
  }
}

/** A WireError of the shared implementation as the SDK's error (store trouble marked as such). */
export function protocolErrorOf(wire: WireError): ProtocolError {
  if (wire.httpStatus === SERVER_TROUBLE_STATUS) return troubleProtocolError();
  return new ProtocolError(wire.error.code, wire.error.message, wire.error.data);
}
