import type { McpServer, ServerContext } from '@modelcontextprotocol/server';
import { isObject } from '../../protocol/envelope.js';
import { declaresV1Tasks, encodeCreateTaskResultV1 } from '../../protocol/v1.js';
import { normalizeTaskOption } from '../../runtime/tool.js';
import type { JsonObject } from '../../task/record.js';
import { principalOf } from '../core/principal.js';
import type { RegisteredTaskTool } from '../core/types.js';
import { SESSION_META, type LegacyDeps } from './deps.js';
import { invalidParams, methodNotFound, rethrowing } from './rpc.js';
import { askClient } from './v1-input.js';

type RawRequest = { method: string; params?: JsonObject };
type RawHandler = (request: RawRequest, ctx: ServerContext) => Promise<JsonObject>;

const MAX_BEFORE_TASK_ROUNDS = 8;

interface SdkServerInternals {
  _requestHandlers: Map<string, RawHandler>;
  fallbackRequestHandler?: RawHandler;
  getClientCapabilities(): unknown;
}

/**
 * The SDK validates every `tools/call` result with the 2025 codec and refuses `{ task }`
 * (sdk-v2-notes §3), so the session's `tools/call` is taken out of McpServer and answered from
 * the fallback handler: task-augmented calls here, everything else by McpServer's own handler.
 */
export function installV1ToolsCall(mcp: McpServer, deps: LegacyDeps): void {
  const server = mcp.server as unknown as SdkServerInternals;
  const sdkToolsCall = server._requestHandlers.get('tools/call');
  mcp.server.removeRequestHandler('tools/call');
  server.fallbackRequestHandler = (request, ctx) => {
    if (request.method !== 'tools/call') {
      return Promise.reject(methodNotFound(`Method not found: ${request.method}`));
    }
    return rethrowing(
      () => toolsCall(deps, server, sdkToolsCall, request, ctx),
      deps.instanceDeps.trouble,
    );
  };
}

async function toolsCall(
  deps: LegacyDeps,
  server: SdkServerInternals,
  sdkToolsCall: RawHandler | undefined,
  request: RawRequest,
  ctx: ServerContext,
): Promise<JsonObject> {
  const params = request.params ?? {};
  const name = params['name'];
  if (typeof name !== 'string') throw invalidParams('params.name must be a string');
  const tool = deps.instanceDeps.tools.definition(name);
  const mode = normalizeTaskOption(tool?.config.task).mode;
  const task = params['task'];
  if (task !== undefined) {
    if (!isObject(task)) throw invalidParams('params.task must be an object');
    if (tool === undefined || mode === 'forbidden') {
      throw methodNotFound(`Tool '${name}' does not support task-augmented execution`);
    }
    return createV1Task(deps, tool, params, task, ctx, server.getClientCapabilities());
  }
  const hostWithoutTasks = !declaresV1Tasks(server.getClientCapabilities());
  if (mode === 'required' && !(deps.fallbackTools && hostWithoutTasks)) {
    throw methodNotFound(`Tool '${name}' requires task-augmented execution (params.task)`);
  }
  if (sdkToolsCall === undefined) throw methodNotFound(`Unknown tool: ${name}`);
  return sdkToolsCall(request, ctx);
}

async function validateArguments(tool: RegisteredTaskTool, args: JsonObject): Promise<void> {
  const schema = tool.config.inputSchema;
  if (schema === undefined) return;
  const outcome = await schema['~standard'].validate(args);
  if (outcome.issues !== undefined) {
    const detail = outcome.issues.map((issue) => issue.message).join('; ');
    throw invalidParams(
      `Input validation error: Invalid arguments for tool ${tool.name}: ${detail}`,
    );
  }
}

async function createV1Task(
  deps: LegacyDeps,
  tool: RegisteredTaskTool,
  params: JsonObject,
  task: JsonObject,
  ctx: ServerContext,
  clientCapabilities: unknown,
): Promise<JsonObject> {
  const args = isObject(params['arguments']) ? params['arguments'] : {};
  await validateArguments(tool, args);
  const principal = principalOf(ctx);
  const caps = isObject(clientCapabilities) ? clientCapabilities : {};
  const taskArgs = await beforeTask(tool, args, principal, caps, ctx);
  const settings = normalizeTaskOption(tool.config.task);
  const ttl = task['ttl'];
  const record = await deps.instanceDeps.runtime().createTask({
    tool: tool.name,
    arguments: taskArgs,
    principal,
    ...(typeof ttl === 'number'
      ? { ttlMs: ttl }
      : settings.ttlMs === undefined
        ? {}
        : { ttlMs: settings.ttlMs }),
    ...(settings.pollIntervalMs === undefined ? {} : { pollIntervalMs: settings.pollIntervalMs }),
    generation: 'v1',
    meta: {
      clientCapabilities: caps,
      ...(ctx.sessionId === undefined ? {} : { [SESSION_META]: ctx.sessionId }),
    },
  });
  return encodeCreateTaskResultV1(record, tool.config.modelImmediateResponse);
}

/** A tool's questions before its task exists, asked as real requests on this call's stream. */
async function beforeTask(
  tool: RegisteredTaskTool,
  args: JsonObject,
  principal: string,
  clientCapabilities: JsonObject,
  ctx: ServerContext,
): Promise<JsonObject> {
  const hook = tool.config.beforeTask;
  if (hook === undefined) return args;
  const inputResponses: Record<string, JsonObject> = {};
  for (let round = 0; round < MAX_BEFORE_TASK_ROUNDS; round++) {
    const outcome = await hook(args, {
      principal,
      inputResponses: { ...inputResponses },
      clientCapabilities,
    });
    if (!outcome) return args;
    if ('arguments' in outcome) return outcome.arguments;
    for (const [key, request] of Object.entries(outcome.inputRequests)) {
      if (key in inputResponses) continue;
      inputResponses[key] = await askClient(ctx, request, undefined, ctx.mcpReq.signal);
    }
  }
  throw invalidParams(
    `Tool '${tool.name}' asked for input more than ${MAX_BEFORE_TASK_ROUNDS} times`,
  );
}
