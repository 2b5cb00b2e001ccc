import type { McpServer, ServerContext } from '@modelcontextprotocol/server';
import { TOOLS_CALL_METHOD } from '../../protocol/constants.js';

/** McpServer's `tools/call` handler as it hands it to `Server.setRequestHandler`. */
export type ToolsCallHandler = (request: unknown, ctx: ServerContext) => Promise<unknown>;

/** Puts something around that handler (of `mcp`): it may answer itself or call the SDK's. */
export type ToolsCallWrapper = (sdk: ToolsCallHandler, mcp: McpServer) => ToolsCallHandler;

type SetRequestHandler = (method: string, ...rest: unknown[]) => void;

/**
 * Wraps the `tools/call` handler McpServer installs on its `Server` (at the first
 * `registerTool`), through the public `setRequestHandler`: the SDK turns whatever a tool
 * callback throws into an `isError` result, and answers a 2025-11-25 `tools/call` only as a
 * CallToolResult, so taskrail's store trouble and 2025-11-25 task creation sit around it instead.
 * Call before the first tool is registered; the SDK still validates the request and the result
 * and runs its MRTR seam around the wrapped handler. Returns whether the handler has been
 * wrapped yet (see `assertToolsCallWrapped`).
 */
export function wrapToolsCall(mcp: McpServer, wrap: ToolsCallWrapper): () => boolean {
  let wrapped = false;
  const server = mcp.server;
  const install = server.setRequestHandler.bind(server) as SetRequestHandler;
  const wrapping: SetRequestHandler = (method, ...rest) => {
    const handler = rest[0];
    if (method === TOOLS_CALL_METHOD && rest.length === 1 && typeof handler === 'function') {
      install(method, wrap(handler as ToolsCallHandler, mcp));
      wrapped = true;
      return;
    }
    install(method, ...rest);
  };
  server.setRequestHandler = wrapping as typeof server.setRequestHandler;
  return () => wrapped;
}

/**
 * Fails loudly when McpServer registered a tool without handing its `tools/call` handler to
 * `setRequestHandler` (an SDK version that installs it another way): store trouble would then
 * hide in `isError` results and 2025-11-25 task creation would be lost without a word.
 */
export function assertToolsCallWrapped(wrapped: () => boolean, toolCount: number): void {
  if (toolCount === 0 || wrapped()) return;
  throw new Error(
    'taskrail: this @modelcontextprotocol/server version installs tools/call in a way taskrail ' +
      'cannot wrap; install the version package.json names',
  );
}
