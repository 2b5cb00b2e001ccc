import type { CallToolResult, McpServer, ServerContext } from '@modelcontextprotocol/server';
import * as z from 'zod/v4';
import { withStructuredText } from '../../protocol/index.js';
import { isPlausibleTaskId } from '../../task/ids.js';
import type { JsonObject, TaskRecord } from '../../task/record.js';
import { isTerminal } from '../../task/status.js';
import { principalOf } from '../tasks/principal.js';
import type { TaskRuntimePort } from '../tasks/runtime-port.js';
import { endedWithoutResult, questionsOf, taskHandle } from '../tasks/task-handle.js';
import { isServerTrouble } from '../tasks/server-trouble.js';
import { noteCallTrouble } from './call-trouble.js';
import { schemaConvertedOnce } from './schema-once.js';

/**
 * Long tools for hosts that know nothing of tasks: past the inline wait a task-capable tool
 * answers with a handle, and three plain tools let the model follow the task. Opt-in
 * (`fallbackTools`).
 */
export const FALLBACK_TOOL_NAMES = ['task_status', 'task_result', 'task_cancel'] as const;

const TaskIdInput = schemaConvertedOnce(
  z.object({ taskId: z.string().describe('The id a long-running tool returned') }),
);

function text(value: string, extra: JsonObject = {}): CallToolResult {
  return withStructuredText({
    content: [{ type: 'text', text: value }],
    ...extra,
  } as CallToolResult);
}

function notFound(taskId: string): CallToolResult {
  return text(`There is no task '${taskId}' (unknown, expired, or not yours).`, { isError: true });
}

function describe(task: TaskRecord): string {
  const message = task.statusMessage === undefined ? '' : ` (${task.statusMessage})`;
  return `Task ${task.id} (${task.tool}) is ${task.status}${message}.`;
}

function statusResult(task: TaskRecord, waitMs: number): CallToolResult {
  const structured: JsonObject = {
    taskId: task.id,
    tool: task.tool,
    status: task.status,
    ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
  };
  if (task.status === 'working') return withStructuredText(taskHandle(task, waitMs));
  if (task.status === 'input_required') {
    const questions = questionsOf(task);
    const asked = questions.length === 0 ? '' : ` It asks: ${questions.join(' / ')}.`;
    return text(
      `${describe(task)}${asked} This host cannot answer it; a client with tasks support can, ` +
        'or stop it with task_cancel.',
      { structuredContent: { ...structured, questions } },
    );
  }
  return text(`${describe(task)} Call task_result to read the outcome.`, {
    structuredContent: { ...structured, next: 'task_result', arguments: { taskId: task.id } },
  });
}

function resultOf(task: TaskRecord, waitMs: number): CallToolResult {
  if (task.status === 'completed') {
    return withStructuredText((task.result ?? { content: [] }) as CallToolResult);
  }
  if (isTerminal(task.status)) return withStructuredText(endedWithoutResult(task));
  return statusResult(task, waitMs);
}

type Act = (
  runtime: TaskRuntimePort,
  task: TaskRecord,
  principal: string,
  ctx: ServerContext,
) => Promise<CallToolResult>;

function byTaskId(runtime: () => TaskRuntimePort, act: Act) {
  return async (args: { taskId: string }, ctx: ServerContext): Promise<CallToolResult> => {
    const principal = principalOf(ctx);
    const face = runtime();
    try {
      const task = isPlausibleTaskId(args.taskId)
        ? await face.getTask(args.taskId, principal)
        : undefined;
      return task === undefined ? notFound(args.taskId) : await act(face, task, principal, ctx);
    } catch (error) {
      // Store trouble is the retryable -32603, not this tool's isError answer.
      if (isServerTrouble(error)) noteCallTrouble(ctx);
      throw error;
    }
  };
}

export function registerFallbackTools(
  mcp: McpServer,
  runtime: () => TaskRuntimePort,
  inlineWaitMs: number,
): void {
  const tool = (name: string, description: string, act: Act): void => {
    mcp.registerTool(name, { description, inputSchema: TaskIdInput }, byTaskId(runtime, act));
  };
  tool(
    'task_status',
    'Shows the status of a background task started by a long-running tool.',
    async (_rt, task) => statusResult(task, inlineWaitMs),
  );
  tool(
    'task_result',
    'Waits for the result of a background task (a while, then says it is still running).',
    async (rt, task, principal, ctx) => {
      const settled = await rt.waitForSettled(task.id, principal, {
        timeoutMs: inlineWaitMs,
        signal: ctx.mcpReq.signal,
      });
      return resultOf(settled ?? task, inlineWaitMs);
    },
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
