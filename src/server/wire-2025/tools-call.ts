import type { McpServer, ServerContext } from '@modelcontextprotocol/server';
import { isObject } from '../../protocol/envelope.js';
import { TASKRAIL_META } from '../../protocol/index.js';
import { assertIdempotencyKey } from '../../runtime/idempotency.js';
import { declares2025Tasks, encodeCreateTaskResult2025 } from '../../protocol/wire-2025.js';
import { normalizeTaskOption } from '../../runtime/tool.js';
import type { JsonObject } from '../../task/record.js';
import { taskCreationInput } from '../tasks/create-input.js';
import { principalOf } from '../tasks/principal.js';
import type { RegisteredTaskTool } from '../tasks/types.js';
import type { ToolsCallHandler, ToolsCallWrapper } from '../sdk/tools-call-hook.js';
import { SESSION_META, sessionOf, type Wire2025Deps } from './deps.js';
import { invalidParams, methodNotFound, rethrowing } from './rpc.js';
import { askClient } from './input-2025.js';
import { WIRE_2025_VERSION } from '../../protocol/constants.js';

type CallRequest = { params?: JsonObject };

const MAX_BEFORE_TASK_ROUNDS = 8;

/**
 * `tools/call` of a 2025-11-25 session around McpServer's own handler: a task-augmented call
 * (`params.task`) creates the task here, a `required` tool called without one is refused, and
 * everything else is McpServer's. The SDK validates a 2025 `tools/call` result as a
 * CallToolResult, so the CreateTaskResult carries `content: []` beside `task` (allowed: 2025
 * results are open objects; clients read `task`).
 */
export function toolsCall2025(deps: Wire2025Deps): ToolsCallWrapper {
  return (sdk, mcp) => (request, ctx) =>
    rethrowing(
      () => toolsCall(deps, mcp, sdk, request as CallRequest, ctx),
      deps.instanceDeps.trouble,
      ctx.mcpReq.signal,
    );
}

async function toolsCall(
  deps: Wire2025Deps,
  mcp: McpServer,
  sdk: ToolsCallHandler,
  request: CallRequest,
  ctx: ServerContext,
): Promise<unknown> {
  const params = request.params ?? {};
  const name = params['name'];
  if (typeof name !== 'string') throw invalidParams('params.name must be a string');
  const tool = deps.instanceDeps.tools.definition(name);
  const mode = normalizeTaskOption(tool?.config.task).mode;
  const task = params['task'];
  const clientCapabilities = mcp.server.getClientCapabilities();
  if (task !== undefined) {
    if (!isObject(task)) throw invalidParams('params.task must be an object');
    if (tool === undefined || mode === 'forbidden') {
      throw methodNotFound(`Tool '${name}' does not support task-augmented execution`);
    }
    const created = await createTask2025(deps, tool, params, task, ctx, clientCapabilities);
    return { content: [], ...created };
  }
  const hostWithoutTasks = !declares2025Tasks(clientCapabilities);
  if (mode === 'required' && !(deps.fallbackRequired && hostWithoutTasks)) {
    throw methodNotFound(`Tool '${name}' requires task-augmented execution (params.task)`);
  }
  return sdk(request, ctx);
}

/** The arguments as the inputSchema parses them (defaults filled in), as on the 2026 wire. */
async function parsedArguments(tool: RegisteredTaskTool, args: JsonObject): Promise<JsonObject> {
  const schema = tool.config.inputSchema;
  if (schema === undefined) return args;
  const outcome = await schema['~standard'].validate(args);
  if (outcome.issues !== undefined) {
    const detail = outcome.issues.map((issue) => issue.message).join('; ');
    throw invalidParams(
      `Input validation error: Invalid arguments for tool ${tool.name}: ${detail}`,
    );
  }
  return isObject(outcome.value) ? outcome.value : args;
}

async function createTask2025(
  deps: Wire2025Deps,
  tool: RegisteredTaskTool,
  params: JsonObject,
  task: JsonObject,
  ctx: ServerContext,
  clientCapabilities: unknown,
): Promise<JsonObject> {
  const args = await parsedArguments(
    tool,
    isObject(params['arguments']) ? params['arguments'] : {},
  );
  const principal = principalOf(ctx);
  const caps = isObject(clientCapabilities) ? clientCapabilities : {};
  const taskArgs = await beforeTask(tool, args, principal, caps, ctx);
  const ttl = task['ttl'];
  const session = sessionOf(deps, ctx);
  const idempotencyKey = idempotencyKeyOf(params);
  const input = taskCreationInput(
    tool,
    taskArgs,
    { principal, clientCapabilities: caps },
    {
      wire: WIRE_2025_VERSION,
      ...(typeof ttl === 'number' ? { ttlMs: ttl } : {}),
      ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
      ...(session === undefined ? {} : { meta: { [SESSION_META]: session } }),
    },
  );
  const record = await deps.instanceDeps.runtime().createTask(input);
  return encodeCreateTaskResult2025(record, tool.config.modelImmediateResponse);
}

/** `_meta["dev.taskrail/idempotency-key"]` of the call: a retry with it gets the first task. */
function idempotencyKeyOf(params: JsonObject): string | undefined {
  const meta = params['_meta'];
  const key = isObject(meta) ? meta[TASKRAIL_META.idempotencyKey] : undefined;
  assertIdempotencyKey(key);
  return key;
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
