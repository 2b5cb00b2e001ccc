import { randomUUID } from 'node:crypto';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { ProtocolError } from '@modelcontextprotocol/client';
import type { ProgressUpdate, ToolResult } from '../runtime/tool.js';
import { RpcError, RPC } from '../task/errors.js';
import type { InputRequest, JsonObject } from '../task/record.js';
import type { UpstreamConnection } from './upstream.js';
import { sleep, type UpstreamPool } from './pool.js';
import type { TaskRequestOptions, UpstreamTaskWire } from './task-wire-2025.js';
import { timerDelay } from '../task/timers.js';

type CallStep = { kind: 'call'; tool: string; args: JsonObject; asTask: boolean };

/**
 * How to reach the result: call the tool (as an upstream task or not), or follow a task; with
 * `orCall`, follow it only while it lives or once it completed, else (failed, cancelled, gone)
 * make that call instead.
 */
export type CallPlan = CallStep | { kind: 'follow'; task: UpstreamTaskRef; orCall?: CallStep };

/**
 * An upstream task (either wire), and for 2025-11-25 over HTTP the session that holds it (such
 * tasks live in a session; 2026-07-28 has no sessions).
 */
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
  /** Why the upstream no longer waits for the answer (set once, never cleared). */
  withdrawn: string | undefined;
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
  /** A parked task's record is being watched (parked-call.ts). */
  watched = false;
  /** A run of its task in this process is attached to it (not parked). */
  attached = false;
  readonly #abort = new AbortController();
  #connection: UpstreamConnection | undefined;
  #wakers: (() => void)[] = [];

  /** `holder`: whom its upstream slot counts against (pool.ts). */
  constructor(plan: CallPlan, settings: CallSettings, holder: string) {
    // A task followed only if it still lives is this call's once that is known (#call).
    if (plan.kind === 'follow' && plan.orCall === undefined) this.upstreamTask = plan.task;
    void this.#run(plan, settings, holder);
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
    const wire = this.#connection?.tasks;
    const taskId = this.upstreamTask?.taskId;
    if (cancelUpstreamTask && wire !== undefined && taskId !== undefined) {
      void wire.cancel(taskId).catch(() => undefined);
    }
    this.#abort.abort(new RpcError(RPC.INTERNAL_ERROR, 'the upstream call was cancelled'));
  }

  #wake(): void {
    for (const wake of this.#wakers.splice(0)) wake();
  }

  /**
   * `key`: a stable one (an upstream task's own question key), so a re-run finds its answer.
   * `withdrawn`: fires when the upstream stops waiting (its request cancelled or timed out).
   */
  #ask(
    method: string,
    params: JsonObject,
    key?: string,
    withdrawn?: AbortSignal,
  ): Promise<JsonObject> {
    return new Promise((resolve, reject) => {
      const question: UpstreamQuestion = {
        key: key ?? `upstream-${this.id}-${this.questions.length + 1}`,
        request: { method, params },
        answered: false,
        withdrawn: undefined,
        answer(response) {
          this.answered = true;
          resolve(response);
        },
      };
      this.questions.push(question);
      withdrawn?.addEventListener(
        'abort',
        () => {
          this.#withdraw(
            question,
            `the upstream stopped waiting for it (${reasonText(withdrawn.reason)})`,
          );
          reject(new Error('withdrawn by the upstream'));
        },
        { once: true },
      );
      this.#wake();
    });
  }

  /** The question is not asked any more; a parked task learns it from parked-call.ts. */
  #withdraw(question: UpstreamQuestion, reason: string): void {
    if (question.answered || question.withdrawn !== undefined) return;
    question.withdrawn = reason;
    this.#wake();
  }

  #onProgress(update: ProgressUpdate): void {
    this.progress = update;
    this.progressSeq += 1;
    this.#wake();
  }

  async #run(plan: CallPlan, settings: CallSettings, holder: string): Promise<void> {
    const signal = this.#abort.signal;
    let connection: UpstreamConnection | undefined;
    try {
      const session = plan.kind === 'follow' ? plan.task.sessionId : undefined;
      connection = await settings.pool.acquire(signal, holder, session);
      this.#connection = connection;
      connection.onServerRequest = (method, params, withdrawn) =>
        this.#ask(method, params, undefined, withdrawn);
      this.outcome = { result: await this.#call(connection, plan, settings) };
    } catch (error) {
      this.outcome = { error: asRpcError(error) };
    } finally {
      for (const question of this.questions) {
        this.#withdraw(question, 'the upstream call ended without waiting for the answer');
      }
      if (connection !== undefined) settings.pool.release(connection);
      this.#wake();
    }
  }

  async #call(c: UpstreamConnection, plan: CallPlan, s: CallSettings): Promise<ToolResult> {
    const options = {
      signal: this.#abort.signal,
      ...(s.timeoutMs > 0 ? { timeout: s.timeoutMs } : {}),
    };
    if (plan.kind === 'follow') {
      if (plan.orCall === undefined) return this.#refollow(taskWire(c), plan.task.taskId, options);
      if (!(await this.#stillFollowable(c, plan.task.taskId, options))) {
        return this.#call(c, plan.orCall, s);
      }
      this.upstreamTask = plan.task;
      this.#wake();
      return this.#follow(taskWire(c), plan.task.taskId, options);
    }
    const params = { name: plan.tool, arguments: plan.args };
    if (!plan.asTask || c.tasks === undefined) {
      return c.client.callTool(params, {
        ...options,
        onprogress: (p) => this.#onProgress(p),
      });
    }
    const started = await c.tasks.start(params, { ...options, ttlMs: s.upstreamTaskTtlMs });
    if ('result' in started) return started.result;
    this.upstreamTask = {
      taskId: started.taskId,
      ...(c.sessionId === undefined ? {} : { sessionId: c.sessionId }),
    };
    this.#wake();
    return this.#follow(c.tasks, started.taskId, options);
  }

  /** Whether an earlier attempt's upstream task is worth following: running, parked or completed. */
  async #stillFollowable(
    c: UpstreamConnection,
    taskId: string,
    options: TaskRequestOptions,
  ): Promise<boolean> {
    if (c.tasks === undefined) return false;
    try {
      const task = await c.tasks.get(taskId, options);
      return task.status !== 'failed' && task.status !== 'cancelled';
    } catch {
      return false;
    }
  }

  /** After a restart: the upstream task may be gone with its session or process. */
  async #refollow(
    wire: UpstreamTaskWire,
    taskId: string,
    options: TaskRequestOptions,
  ): Promise<ToolResult> {
    try {
      await wire.get(taskId, options);
    } catch (error) {
      throw new RpcError(
        RPC.INTERNAL_ERROR,
        `Task interrupted: the proxy restarted and the upstream task ${taskId} cannot be followed any more (${asRpcError(error).message})`,
      );
    }
    return this.#follow(wire, taskId, options);
  }

  /**
   * Polls the upstream task (honouring its poll interval) until it ends. Its status message is
   * relayed as progress. A 2026-07-28 question becomes one of ours under a key made of the
   * upstream task id and its own key, so a re-run after a restart finds an answer already given.
   */
  async #follow(
    wire: UpstreamTaskWire,
    taskId: string,
    options: TaskRequestOptions,
  ): Promise<ToolResult> {
    const asked = new Set<string>();
    for (;;) {
      const task = await wire.get(taskId, options);
      if (task.statusMessage !== undefined) this.#onProgress({ message: task.statusMessage });
      if (task.status === 'cancelled') {
        throw new RpcError(RPC.INTERNAL_ERROR, `the upstream task ${taskId} was cancelled`);
      }
      this.#withdrawGone(taskId, task.inputRequests ?? {});
      for (const [key, request] of Object.entries(task.inputRequests ?? {})) {
        if (asked.has(key)) continue;
        asked.add(key);
        void this.#ask(request.method, request.params ?? {}, `upstream-${taskId}-${key}`)
          .then((answer) => wire.answer(taskId, { [key]: answer }, options))
          // Asked again at the next poll; the answer is on record, so it is sent again at once.
          .catch(() => asked.delete(key));
      }
      const result = await wire.outcome(taskId, task, options);
      if (result !== undefined) return result;
      await sleep(timerDelay(task.pollIntervalMs ?? DEFAULT_POLL_MS), options.signal);
    }
  }

  /** An upstream task's question that is no longer among its input requests was withdrawn. */
  #withdrawGone(taskId: string, asking: Record<string, unknown>): void {
    const prefix = `upstream-${taskId}-`;
    for (const question of this.questions) {
      if (!question.key.startsWith(prefix) || question.key.slice(prefix.length) in asking) continue;
      this.#withdraw(question, `the upstream task ${taskId} no longer asks it`);
    }
  }
}

function reasonText(reason: unknown): string {
  if (reason instanceof Error) return reason.message;
  return reason === undefined ? 'cancelled' : String(reason);
}

/** The wire a recorded upstream task is followed on (the upstream declared one to start it). */
function taskWire(c: UpstreamConnection): UpstreamTaskWire {
  if (c.tasks === undefined) {
    throw new RpcError(
      RPC.INTERNAL_ERROR,
      'Task interrupted: the upstream no longer declares tasks, so its task cannot be followed',
    );
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
