import {
  createMcpHandler,
  McpServer,
  type CallToolResult,
  type McpHttpHandler,
} from '@modelcontextprotocol/server';
import * as z from 'zod/v4';
import type { JsonObject } from '../../task/record.js';
import { schemaConvertedOnce } from './schema-once.js';
import { HEADER } from '../../protocol/constants.js';

/** A finished answer: HTTP status and body. */
export interface EncodedReply {
  status: number;
  body: string;
}

const ANY_ARGUMENTS = schemaConvertedOnce(z.looseObject({}));
const HEADERS = ['content-type', HEADER.protocolVersion, HEADER.method, HEADER.name] as const;

/**
 * The SDK's own answer to a 2026-07-28 `tools/call` whose result is already known: an SDK server
 * instance whose tool hands back that result, so the SDK projects, validates and stamps it as
 * on its own path. For the results the front does not encode itself (questions for the caller,
 * content it does not know block by block); rare, so the cost of an instance is paid rarely.
 */
export function sdkResultEncoder(
  serverInfo: JsonObject,
): (
  body: JsonObject,
  headers: (name: string) => string | undefined,
  result: CallToolResult,
) => Promise<EncodedReply> {
  const known = new WeakMap<Request, { name: string; result: CallToolResult }>();
  const info = { name: String(serverInfo['name']), version: String(serverInfo['version']) };
  let handler: McpHttpHandler | undefined;
  const factory = (ctx: { requestInfo?: Request }): McpServer => {
    const mcp = new McpServer(info);
    const call = ctx.requestInfo === undefined ? undefined : known.get(ctx.requestInfo);
    if (call === undefined) throw new Error('taskrail: no tools/call result to encode');
    mcp.registerTool(call.name, { description: '', inputSchema: ANY_ARGUMENTS }, () => call.result);
    return mcp;
  };
  return async (body, readHeader, result) => {
    handler ??= createMcpHandler(factory, { legacy: 'reject' });
    const headers = new Headers();
    for (const name of HEADERS) {
      const value = readHeader(name);
      if (value !== undefined) headers.set(name, value);
    }
    const request = new Request('http://localhost/mcp', { method: 'POST', headers });
    const params = (body['params'] ?? {}) as JsonObject;
    known.set(request, { name: String(params['name']), result });
    const response = await handler.fetch(request, { parsedBody: body });
    return { status: response.status, body: await response.text() };
  };
}
