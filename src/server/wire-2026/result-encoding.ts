import type { CallToolResult } from '@modelcontextprotocol/server';
import { isObject, META, type RequestId } from '../../protocol/index.js';
import type { JsonObject } from '../../task/record.js';

/** The keys of a result the front encodes itself. */
const PLAIN_KEYS = new Set(['content', 'structuredContent', 'isError']);

/**
 * A `tools/call` result as the SDK puts it on the 2026-07-28 wire, for the shapes whose encoding
 * is known exactly: text blocks only, object `structuredContent`, boolean `isError`, no `_meta`.
 * The SDK's wire schema writes `content` (each text block as `type`, `text`; `[]` when there is
 * none), `structuredContent`, `isError` in that order, then its stamps `resultType` and `_meta`
 * with its serverInfo (test/server/tools-call-inline.test.ts compares the bytes). Undefined for any other shape: the SDK
 * encodes those itself.
 */
export function encodePlainResult(
  result: CallToolResult,
  serverInfo: JsonObject,
): JsonObject | undefined {
  const raw = result as unknown as JsonObject;
  for (const key in raw) if (!PLAIN_KEYS.has(key)) return undefined;
  const content = raw['content'] ?? [];
  if (!Array.isArray(content) || !content.every(isPlainText)) return undefined;
  const structured = raw['structuredContent'];
  if (structured !== undefined && !isObject(structured)) return undefined;
  const isError = raw['isError'];
  if (isError !== undefined && typeof isError !== 'boolean') return undefined;
  const blocks = content.map((block: JsonObject) => ({ type: 'text', text: block['text'] }));
  const wire: JsonObject = { content: blocks };
  if (structured !== undefined) wire['structuredContent'] = structured;
  if (isError !== undefined) wire['isError'] = isError;
  wire['resultType'] = 'complete';
  wire['_meta'] = { [META.serverInfo]: serverInfo };
  return wire;
}

/** The JSON-RPC answer in the SDK's key order. */
export function sdkResultMessage(id: RequestId, result: JsonObject): string {
  return JSON.stringify({ result, jsonrpc: '2.0', id });
}

function isPlainText(block: unknown): boolean {
  if (!isObject(block) || block['type'] !== 'text' || typeof block['text'] !== 'string') {
    return false;
  }
  for (const key in block) if (key !== 'type' && key !== 'text') return false;
  return true;
}
