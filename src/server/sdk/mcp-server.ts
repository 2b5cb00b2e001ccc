import {
  McpServer,
  type RegisteredTool,
  type ServerContext,
  type ServerOptions,
} from '@modelcontextprotocol/server';
import * as z from 'zod/v4';
import { TASKS_EXTENSION } from '../../protocol/index.js';
import type { JsonObject } from '../../task/record.js';
import type { ToolRegistry } from '../tasks/tool-registry.js';
import type { TaskRuntimePort } from '../tasks/runtime-port.js';
import { callTaskTool } from './tools-call.js';
import { registerFallbackTools } from './fallback-tools.js';
import type { TroubleReporter } from '../tasks/server-trouble.js';
import { surfaceCallTrouble } from './call-trouble.js';
import { assertToolsCallWrapped, wrapToolsCall, type ToolsCallWrapper } from './tools-call-hook.js';
import type { InstanceContext, McpConfigurer, RegisteredTaskTool } from '../tasks/types.js';
import { normalizeTaskOption } from '../../runtime/tool.js';
import { schemaConvertedOnce } from './schema-once.js';
import { registerTaskResources, type TaskResourceDeps } from './task-resources.js';
import { registerResourceSubscriptions } from './resource-subscriptions.js';
import { keepSdkResources } from './sdk-resources.js';
import { hostFit, hostOf } from './host-of.js';
import { inlineWaitFor } from '../tasks/host-profiles.js';

export interface InstanceDeps {
  name: string;
  version: string;
  instructions?: string;
  tools: ToolRegistry;
  runtime: () => TaskRuntimePort;
  configurers: readonly McpConfigurer[];
  /** Hosts without tasks get handles, and the task_* tools to follow them. */
  fallbackTools?: boolean;
  /** …and `required` tools answer them too instead of -32021. */
  fallbackRequired?: boolean;
  /** Logs store trouble once and turns it into the retryable -32603. */
  trouble?: TroubleReporter;
  /** How long a call from a host without tasks waits for its task (default: the host's, else 45 s). */
  inlineWaitMs?: number;
  /** The most characters of a result handed out (`--max-result-chars`); a host may take fewer. */
  maxResultChars?: number;
  /** The `taskrail://tasks/…` resources (absent: none are served). */
  resources?: TaskResourceDeps;
  /** Checks every echoed MRTR `requestState` before a handler runs (absent: passed through raw). */
  requestState?: ServerOptions['requestState'];
}

/**
 * What a tool without an input schema accepts: any object. One shared instance, not one per
 * tool per request: building a zod schema is a noticeable part of a synchronous call's cost.
 */
const ANY_OBJECT = schemaConvertedOnce(z.looseObject({}));

/** The SDK's handle of each taskrail tool on an instance (what `registerTool` returned). */
const registeredTools = new WeakMap<McpServer, Map<string, RegisteredTool>>();

/** The SDK's handle of a taskrail tool registered on `mcp`, if it is there. */
export function registeredTool(mcp: McpServer, name: string): RegisteredTool | undefined {
  return registeredTools.get(mcp)?.get(name);
}

/** The session of a server that serves one without an id (stdio's), by server instance. */
const fixedSessions = new WeakMap<McpServer, string>();

function registerTaskTool(mcp: McpServer, deps: InstanceDeps, tool: RegisteredTaskTool): void {
  const { config } = tool;
  // A task's CreateTaskResult has no structuredContent, so only forbidden tools keep the
  // SDK's output check.
  const outputSchema =
    normalizeTaskOption(config.task).mode === 'forbidden' ? config.outputSchema : undefined;
  const registered = mcp.registerTool(
    tool.name,
    {
      description: config.description,
      ...(config.title === undefined ? {} : { title: config.title }),
      inputSchema:
        config.inputSchema === undefined ? ANY_OBJECT : schemaConvertedOnce(config.inputSchema),
      ...(outputSchema === undefined ? {} : { outputSchema }),
      ...(config.annotations === undefined ? {} : { annotations: config.annotations }),
      ...(config._meta === undefined ? {} : { _meta: config._meta }),
    },
    (args: unknown, ctx: ServerContext) => {
      const host = hostOf(mcp);
      return callTaskTool(deps.runtime(), tool, (args ?? {}) as JsonObject, ctx, {
        fallbackTools: deps.fallbackTools === true,
        fallbackRequired: deps.fallbackRequired === true,
        inlineWaitMs: inlineWaitFor(host, deps.inlineWaitMs),
        fit: hostFit(host, deps.maxResultChars, deps.resources),
        sessionCapabilities: mcp.server.getClientCapabilities(),
        session: fixedSessions.get(mcp),
      });
    },
  );
  let mine = registeredTools.get(mcp);
  if (mine === undefined) registeredTools.set(mcp, (mine = new Map()));
  mine.set(tool.name, registered);
}

/**
 * One SDK server instance with every tool, the tasks extension advertised, and the add-ons.
 * `toolsCall` wraps McpServer's own `tools/call` handler (the 2025-11-25 task creation).
 */
export function buildMcpServer(
  deps: InstanceDeps,
  ctx: InstanceContext,
  toolsCall?: ToolsCallWrapper,
): McpServer {
  const mcp = new McpServer(
    { name: deps.name, version: deps.version },
    {
      ...(deps.instructions === undefined ? {} : { instructions: deps.instructions }),
      ...(deps.requestState === undefined ? {} : { requestState: deps.requestState }),
    },
  );
  mcp.server.registerCapabilities({ extensions: { [TASKS_EXTENSION]: {} } });
  if (ctx.session !== undefined) fixedSessions.set(mcp, ctx.session);
  // Before the first tool: McpServer installs its tools/call handler with it.
  const wrapped = wrapToolsCall(mcp, (sdk) =>
    surfaceCallTrouble(toolsCall === undefined ? sdk : toolsCall(sdk, mcp), mcp),
  );
  const tools = deps.tools.all();
  for (const tool of tools) registerTaskTool(mcp, deps, tool);
  assertToolsCallWrapped(wrapped, tools.length);
  if (deps.fallbackTools === true) {
    registerFallbackTools(mcp, {
      runtime: deps.runtime,
      inlineWaitMs: deps.inlineWaitMs,
      maxResultChars: deps.maxResultChars,
      resources: deps.resources,
      tools: deps.tools,
    });
  }
  const handOnSdkResources = keepSdkResources(mcp);
  for (const configure of deps.configurers) configure(mcp, ctx);
  handOnSdkResources();
  // After the configurers: their resources (a proxy's upstream, or registered with the SDK)
  // answer the URIs that are not taskrail's.
  if (deps.resources !== undefined) {
    const resources =
      ctx.session === undefined ? deps.resources : { ...deps.resources, session: ctx.session };
    registerTaskResources(mcp, resources);
    registerResourceSubscriptions(mcp, resources);
  }
  return mcp;
}

/**
 * An SDK server that lives for a whole connection (a 2025-11-25 session, a stdio host) is built
 * once, so tools added to or removed from the registry later (a proxy following its upstream)
 * are added to or removed from it here; the SDK then tells the client `tools/list_changed`.
 * Returns the unsubscribe function.
 */
export function followToolChanges(
  mcp: McpServer,
  deps: InstanceDeps,
  onRegistered: (tool: RegisteredTaskTool) => void = () => undefined,
): () => void {
  const mine = new Set(deps.tools.all().map((tool) => tool.name));
  const sync = (): void => {
    const current = new Map(deps.tools.all().map((tool) => [tool.name, tool]));
    for (const name of mine) {
      if (current.has(name)) continue;
      registeredTool(mcp, name)?.remove();
      registeredTools.get(mcp)?.delete(name);
      mine.delete(name);
    }
    for (const [name, tool] of current) {
      if (mine.has(name)) continue;
      registerTaskTool(mcp, deps, tool);
      onRegistered(tool);
      mine.add(name);
    }
  };
  sync();
  return deps.tools.onChange(sync);
}
