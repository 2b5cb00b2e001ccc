import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** A line longer than this is dropped (reported) instead of growing the buffer without end. */
export const MAX_LINE_BYTES = 10 * 1024 * 1024;

const NOTIFICATION_KEYS = new Set(['jsonrpc', 'method', 'params']);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * The shape JSONRPCNotificationSchema accepts, checked by hand: an upstream may send
 * notifications by the million, and the schema union costs several µs and some garbage for
 * each one, before the notification gate could even count it.
 */
function isNotification(value: unknown): value is JSONRPCMessage {
  if (!isPlainObject(value) || value['jsonrpc'] !== '2.0') return false;
  if (typeof value['method'] !== 'string') return false;
  for (const key in value) if (!NOTIFICATION_KEYS.has(key)) return false;
  const params = value['params'];
  if (params === undefined) return true;
  return isPlainObject(params) && (params['_meta'] === undefined || isPlainObject(params['_meta']));
}

/** One line of newline-delimited JSON-RPC (MCP stdio framing), checked. */
export function parseMessageLine(line: string): JSONRPCMessage {
  const value: unknown = JSON.parse(line);
  return isNotification(value) ? value : JSONRPCMessageSchema.parse(value);
}

/**
 * Splits a byte stream into JSON-RPC messages, one per line, as the SDK's ReadBuffer does, but
 * without throwing out of a stream's `data` handler: a line that is not a message, or one
 * longer than MAX_LINE_BYTES, is reported to `onError` and skipped.
 */
export class JsonLineReader {
  #buffer: Buffer | undefined;
  /** The rest of an overlong line is being skipped, up to its newline. */
  #skipping = false;

  push(
    chunk: Buffer,
    onMessage: (message: JSONRPCMessage) => void,
    onError: (error: Error) => void,
  ): void {
    let buffer = this.#buffer === undefined ? chunk : Buffer.concat([this.#buffer, chunk]);
    this.#buffer = undefined;
    for (;;) {
      const end = buffer.indexOf(10);
      if (end === -1) break;
      const skipped = this.#skipping;
      this.#skipping = false;
      if (!skipped) this.#deliver(buffer.toString('utf8', 0, end), onMessage, onError);
      buffer = buffer.subarray(end + 1);
    }
    if (buffer.length > MAX_LINE_BYTES) {
      if (!this.#skipping)
        onError(new Error(`an upstream line is longer than ${MAX_LINE_BYTES} bytes`));
      this.#skipping = true;
    } else if (buffer.length > 0 && !this.#skipping) this.#buffer = buffer;
  }

  clear(): void {
    this.#buffer = undefined;
    this.#skipping = false;
  }

  #deliver(
    text: string,
    onMessage: (message: JSONRPCMessage) => void,
    onError: (error: Error) => void,
  ): void {
    const line = text.endsWith('\r') ? text.slice(0, -1) : text;
    if (line.trim() === '') return;
    let message: JSONRPCMessage;
    try {
      message = parseMessageLine(line);
    } catch (error) {
      onError(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    onMessage(message);
  }
}
