import { randomUUID } from 'node:crypto';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { ProtocolError } from '@modelcontextprotocol/client';
import type { ProgressUpdate, ToolResult } from '../runtime/tool.js';
import { RpcError, RPC } from '../task/errors.js';
import type { InputRequest, JsonObject } from '../task/record.js';
import type { UpstreamConnection } from './connection.js';
import { sleep, type UpstreamPool } from './pool.js';

/** How to reach the result: call the tool (as an upstream task or not), or follow a task. */
export type CallPlan =
  | { kind: 'call'; tool: string; args: JsonObject; asTask: boolean }
  | { kind: 'follow'; task: UpstreamTaskRef };

/** An upstream task, and the HTTP session that holds it (2025-11-25 tasks live in a session). */
export interface UpstreamTaskRef {
  taskId: string;
  sessionId?: string;
}

export interface CallSettings {
  pool: UpstreamPool;
  /** Each upstream request's deadline; 0 = none. */
  timeoutMs: number;
  /** Retention asked of an upstream task. */
  upstreamTaskTtlMs: number;
}

/** A question from the upstream, waiting for the caller's answer. */
export interface UpstreamQuestion {
  readonly key: string;
  readonly request: InputRequest;
  answered: boolean;
  answer(response: JsonObject): void;
}

type Outcome = { result: ToolResult } | { error: RpcError };

const DEFAULT_POLL_MS = 1000;

/**
 * One upstream call, held in this process while the task that made it runs or is parked.
 * The task's handler attaches to it on each run (taskrail replays handlers from the start),
 * so the upstream call itself is made once and stays open across an `input_required` pause.
 */
export class LiveCall {
  readonly id = randomUUID().slice(0, 8);
  readonly questions: UpstreamQuestion[] = [];
  progress: ProgressUpdate = {};
  progressSeq = 0;
  upstreamTask: UpstreamTaskRef | undefined;
  outcome: Outcome | undefined;
  /** A parked task's record is being watched for cancellation (proxy-tool.ts). */
  watched = false;
  readonly #abort = new AbortController();
  #connection: UpstreamConnection | undefined;
  #wakers: (() => void)[] = [];

  constructor(plan: CallPlan, settings: CallSettings) {
    if (plan.kind === 'follow') this.upstreamTask = plan.task;
    void this.#run(plan, settings);
  }

  /** Resolves at the next change (question, progress, task id, outcome) or when `signal` fires. */
  changed(signal: AbortSignal): Promise<void> {
    if (this.outcome !== undefined) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = () => {
        signal.removeEventListener('abort', wake);
        resolve();
      };
      signal.addEventListener('abort', wake, { once: true });
      this.#wakers.push(wake);
    });
  }

  /** Stops the upstream call: `tasks/cancel` for an upstream task, `notifications/cancelled` otherwise. */
  cancel(cancelUpstreamTask: boolean): void {
    const client = this.#connection?.tasks;
    const taskId = this.upstreamTask?.taskId;
    if (cancelUpstreamTask && client !== undefined && taskId !== undefined) {
      void client.experimental.tasks.cancelTask(taskId).catch(() => undefined);
    }
    this.#abort.abort(new RpcError(RPC.INTERNAL_ERROR, 'the upstream call was cancelled'));
  }

  #wake(): void {
    for (const wake of this.#wakers.splice(0)) wake();
  }

  #ask(method: string, params: JsonObject): Promise<JsonObject> {
    return new Promise((resolve) => {
      this.questions.push({
        key: `upstream-${this.id}-${this.questions.length + 1}`,
        request: { method, params },
        answered: false,
        answer(response) {
          this.answered = true;
          resolve(response);
        },
      });
      this.#wake();
    });
  }

  #onProgress(update: ProgressUpdate): void {
    this.progress = update;
    this.progressSeq += 1;
    this.#wake();
  }

  async #run(plan: CallPlan, settings: CallSettings): Promise<void> {
    const signal = this.#abort.signal;
    let connection: UpstreamConnection | undefined;
    try {
      const session = plan.kind === 'follow' ? plan.task.sessionId : undefined;
      connection = await settings.pool.acquire(signal, session);
      this.#connection = connection;
      connection.onServerRequest = (method, params) => this.#ask(method, params);
      this.outcome = { result: await this.#call(connection, plan, settings) };
    } catch (error) {
      this.outcome = { error: asRpcError(error) };
    } finally {
      if (connection !== undefined) settings.pool.release(connection);
      this.#wake();
    }
  }

  async #call(c: UpstreamConnection, plan: CallPlan, s: CallSettings): Promise<ToolResult> {
    const options = {
      signal: this.#abort.signal,
      ...(s.timeoutMs > 0 ? { timeout: s.timeoutMs } : {}),
    };
    if (plan.kind === 'follow') return this.#refollow(c, plan.task.taskId, options);
    const params = { name: plan.tool, arguments: plan.args };
    if (!plan.asTask) {
      return c.client.callTool(params, {
        ...options,
        onprogress: (p) => this.#onProgress(p),
      });
    }
    const created = await taskWire(c).request(
      { method: 'tools/call', params },
      CreateTaskResultSchema,
      {
        ...options,
        task: { ttl: s.upstreamTaskTtlMs },
      },
    );
    this.upstreamTask = {
      taskId: created.task.taskId,
      ...(c.sessionId === undefined ? {} : { sessionId: c.sessionId }),
    };
    this.#wake();
    return this.#follow(c, created.task.taskId, options);
  }

  /** After a restart: the upstream task may be gone with its session or process. */
  async #refollow(
    c: UpstreamConnection,
    taskId: string,
    options: { signal: AbortSignal; timeout?: number },
  ): Promise<ToolResult> {
    try {
      await taskWire(c).experimental.tasks.getTask(taskId, options);
    } catch (error) {
      throw new RpcError(
        RPC.INTERNAL_ERROR,
        `Task interrupted: the proxy restarted and the upstream task ${taskId} cannot be followed any more (${asRpcError(error).message})`,
      );
    }
    return this.#follow(c, taskId, options);
  }

  /** Polls the upstream task; at input_required or the end, `tasks/result` delivers the rest. */
  async #follow(
    c: UpstreamConnection,
    taskId: string,
    options: { signal: AbortSignal; timeout?: number },
  ): Promise<ToolResult> {
    const tasks = taskWire(c).experimental.tasks;
    for (;;) {
      const task = await tasks.getTask(taskId, options);
      if (task.statusMessage !== undefined) this.#onProgress({ message: task.statusMessage });
      if (task.status === 'cancelled') {
        throw new RpcError(RPC.INTERNAL_ERROR, `the upstream task ${taskId} was cancelled`);
      }
      if (task.status !== 'working') {
        return (await tasks.getTaskResult(taskId, CallToolResultSchema, options)) as ToolResult;
      }
      await sleep(task.pollInterval ?? DEFAULT_POLL_MS, options.signal);
    }
  }
}

/** The 2025-11-25 task wire; only such connections are asked to run or follow upstream tasks. */
function taskWire(c: UpstreamConnection): NonNullable<UpstreamConnection['tasks']> {
  if (c.tasks === undefined) {
    throw new RpcError(RPC.INTERNAL_ERROR, 'this upstream connection has no 2025-11-25 task wire');
  }
  return c.tasks;
}

/** An upstream JSON-RPC error keeps its code and message; anything else says where it came from. */
export function asRpcError(error: unknown): RpcError {
  if (error instanceof RpcError) return error;
  if (error instanceof McpError) return new RpcError(error.code, error.message, error.data);
  if (error instanceof ProtocolError) return new RpcError(error.code, error.message, error.data);
  const message = error instanceof Error ? error.message : String(error);
  return new RpcError(RPC.INTERNAL_ERROR, `upstream call failed: ${message}`);
}
