import type { McpServer } from '@modelcontextprotocol/server';
import type { Wire2025Deps } from './deps.js';
import { buildSessionServer, followSessionTools, forwardStatusNotifications } from './route.js';
import { forwardResourceListChanges } from '../sdk/resource-list-changes.js';

/**
 * The session of every 2025-11-25 stdio connection. Stdio has no session id, and a host that
 * restarts its server must still find the tasks it created (their durability is the point), so
 * all stdio processes on one store share this session: `tasks/list` of the next process shows
 * the tasks of the ones before it. HTTP session ids are UUIDs and never equal it.
 */
export const STDIO_SESSION = 'stdio';

/**
 * The SDK server for a stdio host that opened with `initialize` (2025-11-25 or older): the
 * HTTP sessions' server, with `notifications/tasks/status` for the stdio session's tasks and
 * the registry's later tools. Only the framing differs from HTTP.
 */
export function buildStdioSessionServer(deps: Wire2025Deps, principal: string): McpServer {
  const stdioDeps: Wire2025Deps = { ...deps, session: STDIO_SESSION };
  const mcp = buildSessionServer(stdioDeps, principal);
  const stopTools = followSessionTools(mcp, stdioDeps);
  // Every stdio process shares the stdio session: its caller sees all of its principal's tasks.
  const stopLists = forwardResourceListChanges(mcp, deps.instanceDeps.resources?.store, {
    principal,
  });
  // A restarted process may update the session's tasks before the host has initialized.
  let stopStatus = (): void => undefined;
  const oninitialized = mcp.server.oninitialized;
  mcp.server.oninitialized = () => {
    stopStatus();
    stopStatus = forwardStatusNotifications(mcp, stdioDeps, STDIO_SESSION);
    oninitialized?.();
  };
  const onclose = mcp.server.onclose;
  mcp.server.onclose = () => {
    stopStatus();
    stopTools();
    stopLists();
    onclose?.();
  };
  return mcp;
}
