import type { McpServer } from '@modelcontextprotocol/server';
import {
  declares2025Tasks,
  encodeTask2025,
  WIRE_2025_SERVER_TASK_CAPABILITIES,
} from '../../protocol/wire-2025.js';
import { normalizeTaskOption } from '../../runtime/tool.js';
import { buildMcpServer, followToolChanges, registeredTool } from '../sdk/mcp-server.js';
import type { RegisteredTaskTool } from '../tasks/types.js';
import { SESSION_META, type Wire2025Deps } from './deps.js';
import { registerTaskMethods2025 } from './tasks.js';
import { toolsCall2025 } from './tools-call.js';
import { TASK_STATUS_NOTIFICATION_2025, WIRE_2025_VERSION } from '../../protocol/constants.js';

/**
 * The route of the 2025-11-25 wire: the SDK server behind one session, whose method table is
 * the usual instance's (tools, resources, prompts, the SDK's MRTR shim for 2025-11-25 clients)
 * plus `capabilities.tasks`, `execution.taskSupport` on each tool, 2025-11-25 task creation on
 * `tools/call` (tools-call.ts), and the four 2025-11-25 `tasks/*` methods (tasks.ts).
 */
export function buildSessionServer(deps: Wire2025Deps, principal: string): McpServer {
  const mcp = buildMcpServer(
    deps.instanceDeps,
    { wire: WIRE_2025_VERSION, principal },
    toolsCall2025(deps),
  );
  mcp.server.registerCapabilities({ tasks: WIRE_2025_SERVER_TASK_CAPABILITIES } as never);
  withoutNewerCapabilities(mcp);
  for (const tool of deps.instanceDeps.tools.all()) exposeExecution(mcp, deps, tool);
  registerTaskMethods2025(mcp, deps);
  return mcp;
}

/**
 * A client that negotiated a protocol older than 2025-11-25 (Codex CLI, Gemini CLI: 2025-06-18)
 * is answered without `capabilities.tasks` and `extensions`, which its version does not have.
 */
function withoutNewerCapabilities(mcp: McpServer): void {
  const server = mcp.server;
  const own = server.getCapabilities.bind(server);
  server.getCapabilities = () => {
    const capabilities = own();
    const version = server.getNegotiatedProtocolVersion();
    if (version === undefined || version >= WIRE_2025_VERSION) return capabilities;
    const older = { ...capabilities } as Record<string, unknown>;
    delete older['tasks'];
    delete older['extensions'];
    return older as typeof capabilities;
  };
}

/**
 * McpServer.registerTool has no `execution` option in SDK v2, but the RegisteredTool it returns
 * has the field, and its tools/list reads it.
 */
function exposeExecution(mcp: McpServer, deps: Wire2025Deps, tool: RegisteredTaskTool): void {
  const entry = registeredTool(mcp, tool.name);
  if (entry === undefined) return;
  const execution = { taskSupport: normalizeTaskOption(tool.config.task).mode };
  // A host that declared no tasks gets plain tools when fallback tools serve its required ones
  // (SDK clients refuse to call a `required` tool without a task). Read at tools/list time.
  const plain = (): boolean =>
    deps.fallbackTools && !declares2025Tasks(mcp.server.getClientCapabilities());
  Object.defineProperty(entry, 'execution', {
    get: () => (plain() ? undefined : execution),
    configurable: true,
  });
}

/** Keeps a session's tools in step with the registry, each with its `execution` field. */
export function followSessionTools(mcp: McpServer, deps: Wire2025Deps): () => void {
  return followToolChanges(mcp, deps.instanceDeps, (tool) => exposeExecution(mcp, deps, tool));
}

/**
 * `notifications/tasks/status` for the tasks this session created, on its standalone stream
 * (dropped by the transport when the client opened none). Returns the unsubscribe function.
 */
export function forwardStatusNotifications(
  mcp: McpServer,
  deps: Wire2025Deps,
  sessionId: string,
): () => void {
  return deps.runtime.events.on('task:updated', ({ task }) => {
    if (task.meta[SESSION_META] !== sessionId) return;
    const notification = {
      method: TASK_STATUS_NOTIFICATION_2025,
      params: { ...encodeTask2025(task) },
    };
    mcp.server.notification(notification as never).catch((error: unknown) => {
      deps.logger?.warn('cannot send notifications/tasks/status', { error: String(error) });
    });
  });
}
