import type {
  CallToolResult,
  McpServer,
  RegisteredTool,
  ServerContext,
} from '@modelcontextprotocol/server';
import * as z from 'zod/v4';
import { declaresTasks } from '../../protocol/index.js';
import { declares2025Tasks } from '../../protocol/wire-2025.js';
import { presentFor, type HostFit } from '../tasks/host-fit.js';
import { inlineWaitFor } from '../tasks/host-profiles.js';
import { finalResult } from '../tasks/inline-wait.js';
import type { ToolRegistry } from '../tasks/tool-registry.js';
import { hostFit, hostOf } from './host-of.js';
import { asksForPart, resultPart, type ResultArgs } from './result-part.js';
import type { TaskResourceDeps } from './task-resources.js';
import { answerTask, AnswerInput, type AnswerArgs } from './task-answer.js';
import { isPlausibleTaskId } from '../../task/ids.js';
import type { JsonObject, TaskRecord } from '../../task/record.js';
import { isTerminal } from '../../task/status.js';
import { principalOf } from '../tasks/principal.js';
import type { TaskRuntimePort } from '../tasks/runtime-port.js';
import { endedWithoutResult, taskHandle } from '../tasks/task-handle.js';
import { isServerTrouble } from '../tasks/server-trouble.js';
import { noteCallTrouble } from './call-trouble.js';
import { schemaConvertedOnce } from './schema-once.js';

/**
 * Long tools for hosts that know nothing of tasks: past the inline wait a task-capable tool
 * answers with a handle, and three plain tools let the model follow the task. Opt-in
 * (`fallbackTools`).
 */
export const FALLBACK_TOOL_NAMES = [
  'task_status',
  'task_result',
  'task_cancel',
  'task_answer',
] as const;

const TASK_ID = z.string().describe('The id a long-running tool returned');

const TaskIdInput = schemaConvertedOnce(z.object({ taskId: TASK_ID }));

const ResultInput = schemaConvertedOnce(
  z.object({
    taskId: TASK_ID,
    offset: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe(
        "Where to start reading the result's text, in characters (a shortened result says)",
      ),
    length: z.number().int().min(1).optional().describe('How many characters to read'),
    part: z
      .enum(['result', 'structured'])
      .optional()
      .describe('The text (default) or the JSON of a moved structuredContent'),
  }),
);

/** A plain answer; its JSON copy, where the host needs one, is added as it is handed out. */
function text(value: string, extra: JsonObject = {}): CallToolResult {
  return { content: [{ type: 'text', text: value }], ...extra } as CallToolResult;
}

function notFound(taskId: string): CallToolResult {
  return text(`There is no task '${taskId}' (unknown, expired, or not yours).`, { isError: true });
}

function describe(task: TaskRecord): string {
  const message = task.statusMessage === undefined ? '' : ` (${task.statusMessage})`;
  return `Task ${task.id} (${task.tool}) is ${task.status}${message}.`;
}

function statusResult(task: TaskRecord, host: CallHost): CallToolResult {
  const structured: JsonObject = {
    taskId: task.id,
    tool: task.tool,
    status: task.status,
    ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
  };
  if (!isTerminal(task.status)) return taskHandle(task, host.waitMs, host.fit.profile.view);
  return text(`${describe(task)} Call task_result to read the outcome.`, {
    structuredContent: { ...structured, next: 'task_result', arguments: { taskId: task.id } },
  });
}

/** What the fallback tools need: the runtime, the host of each call, and the task texts. */
export interface FallbackDeps {
  runtime: () => TaskRuntimePort;
  /** The configured inline wait (`--inline-wait`); each host's own when absent. */
  inlineWaitMs: number | undefined;
  maxResultChars: number | undefined;
  resources: TaskResourceDeps | undefined;
  tools: ToolRegistry;
}

/** How one call is answered: the host's inline wait and result fitting. */
interface CallHost {
  waitMs: number;
  fit: HostFit;
  keepsStructured: boolean;
}

async function resultOf(task: TaskRecord, host: CallHost): Promise<CallToolResult> {
  if (task.status === 'completed') return finalResult(task, host);
  if (isTerminal(task.status)) return endedWithoutResult(task);
  return statusResult(task, host);
}

type Act = (
  runtime: TaskRuntimePort,
  task: TaskRecord,
  principal: string,
  ctx: ServerContext,
  host: CallHost,
) => Promise<CallToolResult>;

function byTaskId<A extends { taskId: string }>(
  deps: FallbackDeps,
  mcp: McpServer,
  act: (args: A) => Act,
) {
  return async (args: A, ctx: ServerContext): Promise<CallToolResult> => {
    const principal = principalOf(ctx);
    const face = deps.runtime();
    try {
      const task = isPlausibleTaskId(args.taskId)
        ? await face.getTask(args.taskId, principal)
        : undefined;
      if (task === undefined) return notFound(args.taskId);
      const profile = hostOf(mcp);
      const host: CallHost = {
        waitMs: inlineWaitFor(profile, deps.inlineWaitMs),
        fit: hostFit(profile, deps.maxResultChars, deps.resources),
        keepsStructured: deps.tools.definition(task.tool)?.config.outputSchema !== undefined,
      };
      return presentFor(profile, await act(args)(face, task, principal, ctx, host));
    } catch (error) {
      // Store trouble is the retryable -32603, not this tool's isError answer.
      if (isServerTrouble(error)) noteCallTrouble(ctx);
      throw error;
    }
  };
}

/**
 * Listed (and served) only to hosts that declare no tasks, and to those that follow only
 * `required` tools as tasks (Copilot --experimental): a host with tasks follows its tasks itself.
 */
function onlyForHostsWithoutTasks(mcp: McpServer, tool: RegisteredTool): void {
  Object.defineProperty(tool, 'enabled', {
    get: () => {
      const caps = mcp.server.getClientCapabilities();
      const withTasks = declaresTasks(caps) || declares2025Tasks(caps);
      return !withTasks || hostOf(mcp).tasksOnlyWhenRequired === true;
    },
    set: () => undefined,
    configurable: true,
  });
}

export function registerFallbackTools(mcp: McpServer, deps: FallbackDeps): void {
  const tool = <A extends { taskId: string }>(
    name: string,
    description: string,
    input: typeof TaskIdInput | typeof ResultInput | typeof AnswerInput,
    act: (args: A) => Act,
  ): void => {
    const registered = mcp.registerTool(
      name,
      { description, inputSchema: input },
      byTaskId(deps, mcp, act) as never,
    );
    onlyForHostsWithoutTasks(mcp, registered);
  };
  tool(
    'task_status',
    'Shows the status of a background task started by a long-running tool.',
    TaskIdInput,
    () => async (_rt, task, _p, _ctx, host) => statusResult(task, host),
  );
  tool(
    'task_result',
    'Waits for the result of a background task (a while, then says it is still running). ' +
      "With offset (and length), returns that part of a long result's text.",
    ResultInput,
    (args: ResultArgs) => async (rt, task, principal, ctx, host) => {
      const settled = await rt.waitForSettled(task.id, principal, {
        timeoutMs: host.waitMs,
        signal: ctx.mcpReq.signal,
      });
      const latest = settled ?? task;
      if (latest.status === 'completed' && asksForPart(args) && deps.resources !== undefined) {
        return resultPart(deps.resources, latest, args, host.fit);
      }
      return resultOf(latest, host);
    },
  );
  tool(
    'task_answer',
    "Answers the question a background task waits on (its handle gives the key and the answer's schema).",
    AnswerInput,
    (args: AnswerArgs) => async (rt, task, principal, ctx, host) => {
      const answer = await answerTask(rt, task, principal, args);
      if ('refused' in answer) return answer.refused;
      const settled = await rt.waitForSettled(task.id, principal, {
        timeoutMs: host.waitMs,
        signal: ctx.mcpReq.signal,
      });
      return resultOf(settled ?? answer.task, host);
    },
  );
  tool(
    'task_cancel',
    'Cancels a background task started by a long-running tool.',
    TaskIdInput,
    () => async (rt, task, principal) => {
      const after = (await rt.cancelTask(task.id, principal)) ?? task;
      return after.status === 'cancelled'
        ? text(`Task ${task.id} is cancelled.`)
        : text(`Task ${task.id} had already ended: ${after.status}.`);
    },
  );
}
