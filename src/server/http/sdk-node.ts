import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/server';
import type { FetchLikeMcpHandler } from '@modelcontextprotocol/node';

type NodeRequest = IncomingMessage & { auth?: AuthInfo };
/** The SDK's Node adapter's shape, as taskrail calls it. */
export type SdkNodeHandler = (
  req: NodeRequest,
  res: ServerResponse,
  parsedBody?: unknown,
) => Promise<void>;

/**
 * The SDK's Node adapter (`toNodeHandler`), loaded by the first request that needs it. Only
 * requests whose body taskrail did not read itself and 2025-11-25 sessions go through it, and
 * importing it brings `@hono/node-server` and `node:http2` along: ~4.6 MiB of resident memory
 * that a server which never gets such a request would hold from its start. The request waits
 * paused for the import (its body stays in the socket), once per process.
 */
export function lazySdkNodeHandler(
  handler: FetchLikeMcpHandler,
  maxRequestBodySize: number,
): SdkNodeHandler {
  let adapter: Promise<SdkNodeHandler> | undefined;
  const load = async (): Promise<SdkNodeHandler> => {
    const { toNodeHandler } = await import('@modelcontextprotocol/node');
    return toNodeHandler(handler, { maxRequestBodySize }) as SdkNodeHandler;
  };
  return async (req, res, parsedBody) => {
    adapter ??= load().catch((error: unknown) => {
      adapter = undefined; // the next request tries again
      throw error;
    });
    const node = await adapter;
    return node(req, res, parsedBody);
  };
}
