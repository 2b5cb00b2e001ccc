import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { TOOLS_CALL_METHOD, WIRE_2025_VERSION, WIRE_2026_VERSION } from '../protocol/constants.js';
import type { ToolResult } from '../runtime/tool.js';
import type { InputRequest, JsonObject } from '../task/record.js';

export type UpstreamTaskStatus =
  'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** An upstream task as one `tasks/get` showed it, in terms common to both task wires. */
export interface UpstreamTaskState {
  status: UpstreamTaskStatus;
  statusMessage?: string | undefined;
  pollIntervalMs?: number | undefined;
  /** 2026-07-28: the questions it waits on, by the upstream's keys (answered with `answer`). */
  inputRequests?: Record<string, InputRequest> | undefined;
  /** 2026-07-28: the result of a completed task, inlined. */
  result?: ToolResult | undefined;
  /** 2026-07-28: the JSON-RPC error of a failed task, inlined. */
  error?: { code: number; message: string; data?: unknown } | undefined;
}

export interface TaskRequestOptions {
  signal: AbortSignal;
  timeout?: number;
}

/**
 * The task wire of one upstream connection: the 2025-11-25 experimental tasks (SDK v1 client)
 * or the 2026-07-28 `io.modelcontextprotocol/tasks` extension (SDK v2 client). The proxy
 * starts, follows, answers and cancels upstream tasks through this alone, so the durable
 * bookkeeping around them (proxy-tool.ts, live-call.ts) exists once for both wires.
 */
export interface UpstreamTaskWire {
  readonly wire: typeof WIRE_2025_VERSION | typeof WIRE_2026_VERSION;
  /** Whether a call of this tool should ask the upstream for a task. */
  runsAsTask(tool: Tool): boolean;
  /** Calls the tool asking for a task; an upstream may still answer with a plain result. */
  start(
    params: { name: string; arguments: JsonObject },
    options: TaskRequestOptions & { ttlMs: number },
  ): Promise<{ taskId: string } | { result: ToolResult }>;
  get(taskId: string, options: TaskRequestOptions): Promise<UpstreamTaskState>;
  /** The task's result once `state` says it ended (throws its error); undefined while it runs. */
  outcome(
    taskId: string,
    state: UpstreamTaskState,
    options: TaskRequestOptions,
  ): Promise<ToolResult | undefined>;
  /** 2026-07-28 `tasks/update`: answers to `inputRequests`, by the upstream's keys. */
  answer(
    taskId: string,
    responses: Record<string, JsonObject>,
    options: TaskRequestOptions,
  ): Promise<void>;
  cancel(taskId: string): Promise<void>;
}

/**
 * The 2025-11-25 wire, when the upstream declared `tasks.requests.tools.call`, or on a session
 * rejoined to follow a task (no `initialize`, so no capabilities to read). Its questions are
 * real server→client requests sent while `tasks/result` blocks, so they reach the call through
 * the connection's `onServerRequest`, not through `inputRequests`.
 */
export function taskWire2025(client: Client, rejoined: boolean): UpstreamTaskWire | undefined {
  const declared = client.getServerCapabilities()?.tasks?.requests?.tools?.call !== undefined;
  if (!declared && !rejoined) return undefined;
  const tasks = client.experimental.tasks;
  return {
    wire: WIRE_2025_VERSION,
    runsAsTask: (tool) => {
      const support = tool.execution?.taskSupport;
      return support === 'required' || support === 'optional';
    },
    async start(params, { ttlMs, ...options }) {
      const created = await client.request(
        { method: TOOLS_CALL_METHOD, params },
        CreateTaskResultSchema,
        { ...options, task: { ttl: ttlMs } },
      );
      return { taskId: created.task.taskId };
    },
    async get(taskId, options) {
      const task = await tasks.getTask(taskId, options);
      return {
        status: task.status,
        statusMessage: task.statusMessage,
        pollIntervalMs: task.pollInterval,
      };
    },
    async outcome(taskId, state, options) {
      // input_required too: tasks/result is where this wire delivers the questions.
      if (state.status === 'working') return undefined;
      return (await tasks.getTaskResult(taskId, CallToolResultSchema, options)) as ToolResult;
    },
    answer() {
      return Promise.reject(new Error('2025-11-25 upstream tasks take no tasks/update'));
    },
    async cancel(taskId) {
      await tasks.cancelTask(taskId);
    },
  };
}
