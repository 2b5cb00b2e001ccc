import type { JsonObject } from '../task/record.js';
import {
  HEADER,
  META,
  SUPPORTED_WIRE_2026_VERSIONS,
  TASKS_EXTENSION,
  TOOLS_CALL_METHOD,
  isTaskMethod,
} from './constants.js';
import {
  headerMismatch,
  invalidParams,
  unsupportedProtocolVersion,
  type WireError,
} from './errors.js';

/** Reads a request header by its lower-case name. */
export type HeaderReader = (name: string) => string | undefined;

/** What a valid 2026-07-28 request declares about itself in `params._meta`. */
export interface Wire2026Envelope {
  protocolVersion: string;
  clientCapabilities: JsonObject;
  declaresTasks: boolean;
}

export function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

const BASE64_SENTINEL = /^=\?base64\?([A-Za-z0-9+/=]*)\?=$/;

/** SEP-2243 header values: trimmed, and `=?base64?…?=` decoded as UTF-8. */
export function decodeHeaderValue(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const value = raw.trim();
  if (!value.startsWith('=?')) return value;
  const match = BASE64_SENTINEL.exec(value);
  return match === null ? value : Buffer.from(match[1] ?? '', 'base64').toString('utf8');
}

export function metaOf(params: unknown): JsonObject | undefined {
  if (!isObject(params)) return undefined;
  const meta = params['_meta'];
  return isObject(meta) ? meta : undefined;
}

/** A request is on the 2026-07-28 (stateless) wire when it names a protocol version per request. */
export function isWire2026Request(headers: HeaderReader, params: unknown): boolean {
  return (
    headers(HEADER.protocolVersion) !== undefined ||
    metaOf(params)?.[META.protocolVersion] !== undefined
  );
}

/**
 * What the `Mcp-Name` header repeats (SEP-2243, and `params.taskId` on the extension's tasks/*):
 * the name, uri or task id of the request, when the method has one and it is a string.
 */
export function routingNameOf(method: string, params: unknown): string | undefined {
  if (!isObject(params)) return undefined;
  const field =
    method === TOOLS_CALL_METHOD || method === 'prompts/get'
      ? 'name'
      : method === 'resources/read'
        ? 'uri'
        : isTaskMethod(method)
          ? 'taskId'
          : undefined;
  const value = field === undefined ? undefined : params[field];
  return typeof value === 'string' ? value : undefined;
}

/** `Mcp-Method`, `Mcp-Name` and `MCP-Protocol-Version` against the body (-32020, HTTP 400). */
export function checkRoutingHeaders(
  method: string,
  params: unknown,
  headers: HeaderReader,
): WireError | undefined {
  const headerMethod = decodeHeaderValue(headers(HEADER.method));
  if (headerMethod === undefined) return headerMismatch('the Mcp-Method header is required');
  if (headerMethod !== method)
    return headerMismatch('Mcp-Method does not match the request method');
  const expected = routingNameOf(method, params);
  if (expected !== undefined) {
    const headerName = decodeHeaderValue(headers(HEADER.name));
    if (headerName === undefined) return headerMismatch('the Mcp-Name header is required');
    if (headerName !== expected) return headerMismatch('Mcp-Name does not match the request');
  }
  const headerVersion = decodeHeaderValue(headers(HEADER.protocolVersion));
  const metaVersion = metaOf(params)?.[META.protocolVersion];
  if (headerVersion !== undefined && metaVersion !== undefined && headerVersion !== metaVersion) {
    return headerMismatch('MCP-Protocol-Version does not match _meta protocolVersion');
  }
  return undefined;
}

/** The required `_meta` envelope: protocol version (-32602 / -32022) and client capabilities. */
export function checkEnvelope(
  params: unknown,
  headers: HeaderReader,
): WireError | Wire2026Envelope {
  const meta = metaOf(params);
  const version =
    meta?.[META.protocolVersion] ?? decodeHeaderValue(headers(HEADER.protocolVersion));
  if (meta === undefined || meta[META.protocolVersion] === undefined) {
    if (typeof version === 'string' && !SUPPORTED_WIRE_2026_VERSIONS.includes(version)) {
      return unsupportedProtocolVersion(version);
    }
    return invalidParams(`params._meta["${META.protocolVersion}"] is required`);
  }
  if (typeof version !== 'string' || !SUPPORTED_WIRE_2026_VERSIONS.includes(version)) {
    return unsupportedProtocolVersion(version);
  }
  const capabilities = meta[META.clientCapabilities];
  if (!isObject(capabilities)) {
    return invalidParams(`params._meta["${META.clientCapabilities}"] is required`);
  }
  return {
    protocolVersion: version,
    clientCapabilities: capabilities,
    declaresTasks: declaresTasks(capabilities),
  };
}

/** Whether client capabilities declare the tasks extension (2025-11-25 `tasks` does not count). */
export function declaresTasks(capabilities: unknown): boolean {
  if (!isObject(capabilities)) return false;
  const extensions = capabilities['extensions'];
  return isObject(extensions) && isObject(extensions[TASKS_EXTENSION]);
}

export function isWireError(value: WireError | Wire2026Envelope): value is WireError {
  return 'httpStatus' in value;
}
