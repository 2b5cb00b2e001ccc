import {
  inputRequired,
  ProtocolError,
  type CallToolResult,
  type InputRequest as SdkInputRequest,
  type ServerContext,
} from '@modelcontextprotocol/server';
import {
  declaresTasks,
  encodeCreateTaskResult,
  isObject,
  missingTasksCapability,
} from '../../protocol/index.js';
import { NO_FIT, presentFor, type HostFit } from '../tasks/host-fit.js';
import { normalizeTaskOption } from '../../runtime/tool.js';
import type { InputRequest, JsonObject } from '../../task/record.js';
import { connectionOfAuthInfo, envelopeCapabilities, principalOf } from '../tasks/principal.js';
import { isServerTrouble } from '../tasks/server-trouble.js';
import { isQueueFull, queueFullProtocolError } from '../tasks/queue-full.js';
import { noteCallTrouble } from './call-trouble.js';
import { startToolTask } from '../tasks/create-input.js';
import { objectResponses } from '../tasks/operations.js';
import type { TaskRuntimePort } from '../tasks/runtime-port.js';
import type { RegisteredTaskTool } from '../tasks/types.js';
import {
  callBehindTheScenes,
  DEFAULT_INLINE_WAIT_MS,
  type InlineRequest,
} from '../tasks/inline-wait.js';
import { PROGRESS_NOTIFICATION } from '../../protocol/constants.js';

/** What an McpServer tool callback returns; a CreateTaskResult passes through the SDK as-is. */
type CallOutcome = CallToolResult;

function clientCapabilities(ctx: ServerContext): JsonObject {
  const caps = envelopeCapabilities(ctx);
  return isObject(caps) ? caps : {};
}

function askFirst(requests: Record<string, InputRequest>): CallOutcome {
  return inputRequired({
    inputRequests: requests as unknown as Record<string, SdkInputRequest>,
  }) as unknown as CallOutcome;
}

export interface ToolCallSettings {
  /** Hosts without tasks: past the inline wait a handle, and required tools are served. */
  fallbackTools?: boolean;
  /** With the fallback tools, `required` tools answer hosts without tasks too (else -32021). */
  fallbackRequired?: boolean;
  /** How long a call from a host without tasks waits for its task (default 45 s). */
  inlineWaitMs?: number;
  /** The session of a connection whose requests name none (stdio's 2025-11-25 session). */
  session?: string | undefined;
  /** The calling host's profile, and how its results are fitted to it (default: any host). */
  fit?: HostFit;
  /** A 2025 session's capabilities from `initialize` (a 2026-07-28 request carries its own). */
  sessionCapabilities?: unknown;
}

/**
 * One `tools/call` of a taskrail tool: a task when the tool may run as one and THIS request
 * declares the extension; a durable task behind the scenes with an inline wait when it does not;
 * a synchronous run for forbidden tools (MRTR rounds become InputRequired results). Whatever
 * the path, the result is in the host's form (a structured result also carries its JSON as
 * text, unless the host is known to show structuredContent).
 */
export async function callTaskTool(
  runtime: TaskRuntimePort,
  tool: RegisteredTaskTool,
  args: JsonObject,
  ctx: ServerContext,
  options: ToolCallSettings = {},
): Promise<CallOutcome> {
  const fit = options.fit ?? NO_FIT;
  return presentFor(fit.profile, await routeCall(runtime, tool, args, ctx, options));
}

async function routeCall(
  runtime: TaskRuntimePort,
  tool: RegisteredTaskTool,
  args: JsonObject,
  ctx: ServerContext,
  options: ToolCallSettings,
): Promise<CallOutcome> {
  try {
    return await callOnce(runtime, tool, args, ctx, options);
  } catch (error) {
    // The SDK would make any other throw an isError result: the tool's final word to a host.
    if (isServerTrouble(error)) noteCallTrouble(ctx);
    else if (isQueueFull(error)) noteCallTrouble(ctx, queueFullProtocolError(error));
    throw error;
  }
}

async function callOnce(
  runtime: TaskRuntimePort,
  tool: RegisteredTaskTool,
  args: JsonObject,
  ctx: ServerContext,
  options: ToolCallSettings,
): Promise<CallOutcome> {
  const settings = normalizeTaskOption(tool.config.task);
  const wire2026 = ctx.mcpReq.envelope !== undefined;
  const session = options.sessionCapabilities;
  const caps = wire2026 ? clientCapabilities(ctx) : isObject(session) ? session : {};
  const principal = principalOf(ctx);
  const connection = connectionOfAuthInfo(ctx.http?.authInfo);
  const inputResponses = objectResponses(ctx.mcpReq.inputResponses);
  const fit = options.fit ?? NO_FIT;
  // A host that follows only `required` tools as tasks (Copilot --experimental) cannot read a
  // CreateTaskResult for an optional one: that call is answered as for a host without tasks.
  const asTask = settings.mode === 'required' || fit.profile.tasksOnlyWhenRequired !== true;
  if (settings.mode !== 'forbidden' && wire2026 && declaresTasks(caps) && asTask) {
    const pre = { principal, inputResponses, clientCapabilities: caps, connection };
    return createTask(runtime, tool, args, pre, ctx.mcpReq._meta);
  }
  const fallbackTools = options.fallbackTools === true;
  if (settings.mode === 'required' && !(fallbackTools && options.fallbackRequired === true)) {
    const { error } = missingTasksCapability();
    throw new ProtocolError(error.code, error.message, error.data);
  }
  if (settings.mode !== 'forbidden') {
    const session = wire2026 ? undefined : (ctx.sessionId ?? options.session);
    const caller = {
      principal,
      clientCapabilities: caps,
      wire2026,
      inputResponses,
      session,
      connection,
    };
    const wait = {
      fallbackTools,
      inlineWaitMs: options.inlineWaitMs ?? DEFAULT_INLINE_WAIT_MS,
      fit,
      keepsStructured: tool.config.outputSchema !== undefined,
    };
    return callBehindTheScenes(runtime, tool, args, caller, inlineRequestOf(ctx), wait);
  }
  const outcome = await runtime.runInline({
    tool: tool.name,
    arguments: args,
    principal,
    inputResponses,
    signal: ctx.mcpReq.signal,
  });
  if (outcome.kind === 'input_required') return askFirst(outcome.inputRequests);
  return outcome.result as CallOutcome;
}

/** The SDK request's side of the inline wait: its abort signal, progress as notifications. */
function inlineRequestOf(ctx: ServerContext): InlineRequest {
  const token = ctx.mcpReq._meta?.progressToken;
  if (token === undefined) return { signal: ctx.mcpReq.signal };
  const progress = (count: number, message: string): void => {
    const params = { progressToken: token, progress: count, message };
    // A caller that went away cannot be told; the task is unaffected.
    ctx.mcpReq.notify({ method: PROGRESS_NOTIFICATION, params }).catch(() => undefined);
  };
  return { signal: ctx.mcpReq.signal, progress };
}

async function createTask(
  runtime: TaskRuntimePort,
  tool: RegisteredTaskTool,
  args: JsonObject,
  pre: {
    principal: string;
    inputResponses: Record<string, JsonObject>;
    clientCapabilities: JsonObject;
    connection: string | undefined;
  },
  meta: unknown,
): Promise<CallOutcome> {
  let taskArgs = args;
  if (tool.config.beforeTask !== undefined) {
    const outcome = await tool.config.beforeTask(args, pre);
    if (outcome && 'inputRequests' in outcome) return askFirst(outcome.inputRequests);
    if (outcome && 'arguments' in outcome) taskArgs = outcome.arguments;
  }
  const task = await startToolTask(runtime, tool, taskArgs, { ...pre, meta });
  return encodeCreateTaskResult(task) as unknown as CallOutcome;
}
