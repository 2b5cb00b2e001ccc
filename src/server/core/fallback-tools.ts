import {
  inputRequired,
  type CallToolResult,
  type InputRequest as SdkInputRequest,
  type McpServer,
  type ServerContext,
} from '@modelcontextprotocol/server';
import * as z from 'zod/v4';
import { normalizeTaskOption } from '../../runtime/tool.js';
import { isPlausibleTaskId } from '../../task/ids.js';
import { pendingInputRequests, type JsonObject, type TaskRecord } from '../../task/record.js';
import { principalOf } from './principal.js';
import type { TaskRuntimeFace } from './runtime-port.js';
import type { RegisteredTaskTool } from './types.js';

/**
 * Long tools for hosts that know nothing of tasks: a `required` tool answers at once with its
 * task id, and three plain tools let the model follow the task. Opt-in (`fallbackTools`).
 */
export const FALLBACK_TOOL_NAMES = ['task_status', 'task_result', 'task_cancel'] as const;

const TaskIdInput = z.object({
  taskId: z.string().describe('The id a long-running tool returned'),
});

function text(value: string, extra: JsonObject = {}): CallToolResult {
  return { content: [{ type: 'text', text: value }], ...extra } as CallToolResult;
}

function follow(taskId: string): string {
  return (
    `Call task_status with {"taskId": "${taskId}"} to check on it, task_result with the same ` +
    'arguments to collect its result once it is done, or task_cancel to stop it.'
  );
}

function notFound(taskId: string): CallToolResult {
  return text(`There is no task '${taskId}' (unknown, expired, or not yours).`, { isError: true });
}

function describe(task: TaskRecord): string {
  const message = task.statusMessage === undefined ? '' : ` (${task.statusMessage})`;
  return `Task ${task.id} (${task.tool}) is ${task.status}${message}.`;
}

function statusResult(task: TaskRecord): CallToolResult {
  const structured = {
    taskId: task.id,
    tool: task.tool,
    status: task.status,
    statusMessage: task.statusMessage,
  };
  if (task.status === 'working') {
    return text(`${describe(task)} ${follow(task.id)}`, { structuredContent: structured });
  }
  if (task.status === 'input_required') {
    const questions = Object.values(pendingInputRequests(task)).map((request) => {
      const message = request.params?.['message'];
      return typeof message === 'string' ? message : request.method;
    });
    const asked = questions.length === 0 ? '' : ` It asks: ${questions.join(' / ')}.`;
    return text(
      `${describe(task)}${asked} This host cannot answer it; a client with tasks support can, ` +
        'or stop it with task_cancel.',
      { structuredContent: structured },
    );
  }
  return text(`${describe(task)} Call task_result to read the outcome.`, {
    structuredContent: structured,
  });
}

function resultOf(task: TaskRecord): CallToolResult {
  if (task.status === 'completed') return (task.result ?? { content: [] }) as CallToolResult;
  if (task.status === 'failed') {
    return text(
      `Task ${task.id} failed: ${task.error?.message ?? task.statusMessage ?? 'unknown error'}`,
      {
        isError: true,
      },
    );
  }
  if (task.status === 'cancelled') return text(`Task ${task.id} was cancelled.`, { isError: true });
  return statusResult(task);
}

type Act = (
  runtime: TaskRuntimeFace,
  task: TaskRecord,
  principal: string,
) => Promise<CallToolResult>;

function byTaskId(runtime: () => TaskRuntimeFace, act: Act) {
  return async (args: { taskId: string }, ctx: ServerContext): Promise<CallToolResult> => {
    const principal = principalOf(ctx);
    const face = runtime();
    const task = isPlausibleTaskId(args.taskId)
      ? await face.getTask(args.taskId, principal)
      : undefined;
    return task === undefined ? notFound(args.taskId) : act(face, task, principal);
  };
}

export function registerFallbackTools(mcp: McpServer, runtime: () => TaskRuntimeFace): void {
  const tool = (name: string, description: string, act: Act): void => {
    mcp.registerTool(name, { description, inputSchema: TaskIdInput }, byTaskId(runtime, act));
  };
  tool(
    'task_status',
    'Shows the status of a background task started by a long-running tool.',
    async (_rt, task) => statusResult(task),
  );
  tool(
    'task_result',
    'Returns the result of a background task once it has finished.',
    async (_rt, task) => resultOf(task),
  );
  tool(
    'task_cancel',
    'Cancels a background task started by a long-running tool.',
    async (rt, task, principal) => {
      const after = (await rt.cancelTask(task.id, principal)) ?? task;
      return after.status === 'cancelled'
        ? text(`Task ${task.id} is cancelled.`)
        : text(`Task ${task.id} had already ended: ${after.status}.`);
    },
  );
}

/**
 * A `required` tool called by a host without tasks: start the task, answer with its id and
 * how to follow it. Questions the tool asks before its task exists go the host's usual way
 * (MRTR on 2026-07-28, real requests on a 2025 session).
 */
export async function startForHost(
  runtime: TaskRuntimeFace,
  tool: RegisteredTaskTool,
  args: JsonObject,
  ctx: {
    principal: string;
    inputResponses: Record<string, JsonObject>;
    clientCapabilities: JsonObject;
  },
): Promise<CallToolResult> {
  let taskArgs = args;
  if (tool.config.beforeTask !== undefined) {
    const outcome = await tool.config.beforeTask(args, ctx);
    if (outcome && 'inputRequests' in outcome) {
      const inputRequests = outcome.inputRequests as unknown as Record<string, SdkInputRequest>;
      return inputRequired({ inputRequests }) as unknown as CallToolResult;
    }
    if (outcome && 'arguments' in outcome) taskArgs = outcome.arguments;
  }
  const settings = normalizeTaskOption(tool.config.task);
  const task = await runtime.createTask({
    tool: tool.name,
    arguments: taskArgs,
    principal: ctx.principal,
    ...(settings.ttlMs === undefined ? {} : { ttlMs: settings.ttlMs }),
    ...(settings.pollIntervalMs === undefined ? {} : { pollIntervalMs: settings.pollIntervalMs }),
    generation: 'local',
  });
  return text(`Started ${tool.name} as background task ${task.id}. ${follow(task.id)}`, {
    structuredContent: { taskId: task.id, status: task.status },
  });
}
