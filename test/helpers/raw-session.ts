/**
 * A 2025-11-25 session opened by raw HTTP (`fetch`, no SDK), for the tests that look at what
 * a client sees of `initialize` itself: the status, the session id, the headers and the body.
 */

export interface RawHeaderOptions {
  /** Sent as `Authorization: Bearer …` when given. */
  token?: string;
  /** Sent as `mcp-session-id`, with `mcp-protocol-version: 2025-11-25`, when given. */
  session?: string;
}

/** The headers of a raw POST: JSON in, JSON or SSE out, with a bearer and session when given. */
export function rawHeaders(options: RawHeaderOptions = {}): Record<string, string> {
  return {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
    ...(options.session === undefined
      ? {}
      : { 'mcp-session-id': options.session, 'mcp-protocol-version': '2025-11-25' }),
  };
}

export interface RawInitializeOptions {
  token?: string;
  /** `2025-11-25` unless said. */
  protocolVersion?: string;
  capabilities?: Record<string, unknown>;
  clientInfo?: { name: string; version: string };
  /** The JSON-RPC id; 1 unless said. */
  id?: number;
}

export interface RawInitialize {
  status: number;
  /** The `mcp-session-id` header, null when no session opened. */
  session: string | null;
  headers: Headers;
  /** The whole body, JSON or SSE. */
  text: string;
  /** The JSON-RPC error in the body, if any. */
  error: { code: number; message: string } | undefined;
}

/** One raw `initialize` POST, its body read to the end. */
export async function rawInitialize(
  url: string,
  options: RawInitializeOptions = {},
): Promise<RawInitialize> {
  const params = {
    protocolVersion: options.protocolVersion ?? '2025-11-25',
    capabilities: options.capabilities ?? {},
    clientInfo: options.clientInfo ?? { name: 'raw', version: '1.0.0' },
  };
  const res = await fetch(url, {
    method: 'POST',
    headers: rawHeaders(options.token === undefined ? {} : { token: options.token }),
    body: JSON.stringify({ jsonrpc: '2.0', id: options.id ?? 1, method: 'initialize', params }),
  });
  const text = await res.text();
  const session = res.headers.get('mcp-session-id');
  return { status: res.status, session, headers: res.headers, text, error: errorIn(text) };
}

/** The JSON-RPC error of a JSON body or of the first SSE event. */
function errorIn(text: string): RawInitialize['error'] {
  if (!text.includes('"jsonrpc"')) return undefined;
  const json = text.slice(text.indexOf('{')).split('\n')[0] ?? '{}';
  try {
    return (JSON.parse(json) as { error?: { code: number; message: string } }).error;
  } catch {
    return undefined; // not JSON-RPC after all: the caller asserts on `text`
  }
}

/** One request without params on an open session (`ping` unless said); resolves with the status. */
export async function rawSessionStatus(
  url: string,
  options: RawHeaderOptions,
  method = 'ping',
): Promise<number> {
  const res = await fetch(url, {
    method: 'POST',
    headers: rawHeaders(options),
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method }),
  });
  await res.text();
  return res.status;
}
