import type { McpServer } from '@modelcontextprotocol/server';
import { declaresV1Tasks, encodeTaskV1, V1_SERVER_TASK_CAPABILITIES } from '../../protocol/v1.js';
import { normalizeTaskOption } from '../../runtime/tool.js';
import { buildMcpServer, followToolChanges, registeredTool } from '../core/mcp-instance.js';
import type { RegisteredTaskTool } from '../core/types.js';
import { SESSION_META, type LegacyDeps } from './deps.js';
import { registerV1TaskMethods } from './v1-task-methods.js';
import { v1ToolsCall } from './v1-tools-call.js';

/**
 * The SDK server behind one 2025-11-25 session: the usual instance (tools, resources, prompts,
 * the legacy MRTR shim) plus `capabilities.tasks`, `execution.taskSupport` on each tool, v1
 * task creation on `tools/call`, and the four v1 `tasks/*` methods.
 */
export function buildSessionServer(deps: LegacyDeps, principal: string): McpServer {
  const mcp = buildMcpServer(deps.instanceDeps, { era: 'legacy', principal }, v1ToolsCall(deps));
  mcp.server.registerCapabilities({ tasks: V1_SERVER_TASK_CAPABILITIES } as never);
  for (const tool of deps.instanceDeps.tools.all()) exposeExecution(mcp, deps, tool);
  registerV1TaskMethods(mcp, deps);
  return mcp;
}

/**
 * McpServer.registerTool has no `execution` option in SDK v2, but the RegisteredTool it returns
 * has the field, and its tools/list reads it.
 */
function exposeExecution(mcp: McpServer, deps: LegacyDeps, tool: RegisteredTaskTool): void {
  const entry = registeredTool(mcp, tool.name);
  if (entry === undefined) return;
  const execution = { taskSupport: normalizeTaskOption(tool.config.task).mode };
  // A host that declared no tasks gets plain tools when fallback tools serve its required ones
  // (SDK clients refuse to call a `required` tool without a task). Read at tools/list time.
  const plain = (): boolean =>
    deps.fallbackTools && !declaresV1Tasks(mcp.server.getClientCapabilities());
  Object.defineProperty(entry, 'execution', {
    get: () => (plain() ? undefined : execution),
    configurable: true,
  });
}

/** Keeps a session's tools in step with the registry, each with its `execution` field. */
export function followSessionTools(mcp: McpServer, deps: LegacyDeps): () => void {
  return followToolChanges(mcp, deps.instanceDeps, (tool) => exposeExecution(mcp, deps, tool));
}

/**
 * `notifications/tasks/status` for the tasks this session created, on its standalone stream
 * (dropped by the transport when the client opened none). Returns the unsubscribe function.
 */
export function forwardStatusNotifications(
  mcp: McpServer,
  deps: LegacyDeps,
  sessionId: string,
): () => void {
  return deps.runtime.events.on('task:updated', ({ task }) => {
    if (task.meta[SESSION_META] !== sessionId) return;
    const notification = {
      method: 'notifications/tasks/status',
      params: { ...encodeTaskV1(task) },
    };
    mcp.server.notification(notification as never).catch((error: unknown) => {
      deps.logger?.warn('cannot send notifications/tasks/status', { error: String(error) });
    });
  });
}
