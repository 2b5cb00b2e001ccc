import { randomUUID } from 'node:crypto';
import { passResourcesThrough } from '../server/resources.js';
import { hostname } from 'node:os';
import {
  fromJsonSchema,
  type JsonSchemaType,
  type McpServer,
  type ToolAnnotations,
} from '@modelcontextprotocol/server';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../runtime/api.js';
import type { TaskMode, ToolHandler } from '../runtime/tool.js';
import type { TaskServer } from '../server/app.js';
import type { TaskToolConfig } from '../server/tasks/types.js';
import { TaskrailError } from '../task/errors.js';
import { ControlSession } from './control.js';
import type { LiveCall } from './live-call.js';
import { UpstreamPool } from './pool.js';
import { proxyHandler, type ProxyToolDeps } from './proxy-tool.js';
import type { UpstreamSpec } from './upstream-spec.js';
import type { NotificationRate } from './notification-gate.js';
import { checkCallPolicy, taskPolicyOf, type UpstreamCallPolicy } from './call-policy.js';

export interface ProxyOptions extends UpstreamCallPolicy {
  upstream: UpstreamSpec;
  /** Tools served without tasks (mode `forbidden`), unless the upstream requires tasks. */
  syncTools?: readonly string[];
  /** Tools called again after a proxy crash instead of failing "interrupted". */
  retryTools?: readonly string[];
  /** Deadline of each upstream request in ms; 0 = none. Default 1 hour. */
  upstreamTimeoutMs?: number;
  /** Upstream calls in flight at once. Default 8. */
  concurrency?: number;
  /**
   * Notifications each upstream connection passes on (default 200 at once, then 100 a second);
   * past it they are coalesced, the latest of each kind kept (notification-gate.ts).
   */
  notificationRate?: NotificationRate;
  logger: Logger;
  version: string;
}

export interface RunningProxy {
  /** The upstream tools served so far, by name. */
  readonly tools: ReadonlySet<string>;
  close(): Promise<void>;
}

const DEFAULT_TIMEOUT_MS = 60 * 60 * 1000;
const UPSTREAM_TASK_TTL_MS = 24 * 60 * 60 * 1000;

/** Serves the upstream's tools (as durable tasks), resources and prompts through `app`. */
export async function startProxy(app: TaskServer, options: ProxyOptions): Promise<RunningProxy> {
  const concurrency = options.concurrency ?? 8;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new TaskrailError(
      'CONFIG',
      '--upstream-concurrency must be a whole number of at least 1',
    );
  }
  checkCallPolicy(options);
  const pool = new UpstreamPool({ ...options, spec: options.upstream, size: concurrency });
  const deps: ProxyToolDeps = {
    pool,
    timeoutMs: options.upstreamTimeoutMs ?? DEFAULT_TIMEOUT_MS,
    upstreamTaskTtlMs: UPSTREAM_TASK_TTL_MS,
    store: app.store,
    calls: new Map<string, LiveCall>(),
    parkedCheckMs: 1000,
    owner: `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
    runHere: (taskId) => app.runtime.runHere(taskId),
  };
  // Each served tool's upstream definition, to see what a `list_changed` changed.
  const served = new Map<string, string>();
  let started = false;
  const onTools = (tools: Tool[], runsAsTask: (tool: Tool) => boolean): void => {
    const handlerOf = (tool: Tool): ToolHandler =>
      proxyHandler(
        {
          name: tool.name,
          // An upstream task outlives us: a restarted proxy follows it instead of failing.
          asTask: runsAsTask(tool),
          // Under --retry a call is made again after an error anyway, so after a crash too.
          retry: options.retryTools?.includes(tool.name) === true || (options.retries ?? 0) > 0,
          policy: { timeoutMs: options.timeoutMs, retries: options.retries },
        },
        deps,
      );
    const changed = followUpstreamTools(app, served, tools, handlerOf, options);
    if (changed && started) app.notify.toolsChanged();
  };
  const session = await ControlSession.open({ ...options, spec: options.upstream, onTools });
  started = true;
  app.configure((mcp) => passThrough(mcp, session));
  warnUnknownNames(options, new Set(served.keys()));
  return {
    get tools() {
      return new Set(served.keys());
    },
    async close() {
      await pool.close();
      await session.close();
    },
  };
}

/**
 * Serves `tools` as the upstream lists them now: new ones added, removed ones taken away (a
 * call to one then gets the server's unknown-tool error), changed ones replaced. True when
 * anything changed.
 */
function followUpstreamTools(
  app: TaskServer,
  served: Map<string, string>,
  tools: Tool[],
  handlerOf: (tool: Tool) => ToolHandler,
  options: ProxyOptions,
): boolean {
  const listed = new Map(tools.map((tool) => [tool.name, tool]));
  let changed = false;
  for (const [name, definition] of served) {
    const now = listed.get(name);
    if (now !== undefined && JSON.stringify(now) === definition) continue;
    app.tools.remove(name);
    served.delete(name);
    changed = true;
    if (now === undefined) options.logger.info('the upstream removed a tool', { tool: name });
  }
  for (const tool of listed.values()) {
    if (served.has(tool.name)) continue;
    app.tool(tool.name, toolConfig(tool, options), handlerOf(tool));
    served.set(tool.name, JSON.stringify(tool));
    changed = true;
  }
  return changed;
}

function modeOf(tool: Tool, options: ProxyOptions): TaskMode {
  const upstream = tool.execution?.taskSupport;
  if (upstream === 'required') return 'required';
  return options.syncTools?.includes(tool.name) === true ? 'forbidden' : 'optional';
}

function toolConfig(tool: Tool, options: ProxyOptions): TaskToolConfig {
  const mode = modeOf(tool, options);
  return {
    description: tool.description ?? '',
    ...(tool.title === undefined ? {} : { title: tool.title }),
    inputSchema: fromJsonSchema(tool.inputSchema as JsonSchemaType),
    ...(tool.outputSchema === undefined
      ? {}
      : { outputSchema: fromJsonSchema(tool.outputSchema as JsonSchemaType) }),
    ...(tool.annotations === undefined ? {} : { annotations: tool.annotations as ToolAnnotations }),
    // The handler itself decides what a re-run after a crash does (see proxy-tool.ts).
    task: mode === 'forbidden' ? false : { mode, ...taskPolicyOf(options) },
  };
}

function warnUnknownNames(options: ProxyOptions, served: ReadonlySet<string>): void {
  for (const [flag, names] of [
    ['--sync-tools', options.syncTools],
    ['--retry-tools', options.retryTools],
  ] as const) {
    for (const name of names ?? []) {
      if (!served.has(name)) {
        options.logger.warn(`${flag} names '${name}', which the upstream does not list (yet)`);
      }
    }
  }
}

/** Upstream resources and prompts, answered by the upstream itself through the control session. */
function passThrough(mcp: McpServer, control: ControlSession): void {
  let capabilities;
  try {
    capabilities = control.connection.client.getServerCapabilities();
  } catch {
    return;
  }
  const client = () => control.connection.client;
  if (capabilities?.resources !== undefined) {
    // Beside taskrail's own task resources, which answer `taskrail://` URIs (task-resources.ts).
    passResourcesThrough(mcp, {
      list: (r) => client().listResources(r.params as never),
      templates: (r) => client().listResourceTemplates(r.params as never),
      read: (r) => client().readResource(r.params as never),
    });
  }
  if (capabilities?.prompts !== undefined) {
    mcp.server.registerCapabilities({ prompts: {} });
    mcp.server.setRequestHandler('prompts/list', (r) => client().listPrompts(r.params) as never);
    mcp.server.setRequestHandler('prompts/get', (r) => client().getPrompt(r.params) as never);
  }
}
