import {
  CLIENT_CAPABILITIES_META_KEY,
  type Client,
  type Transport,
} from '@modelcontextprotocol/client';
import * as z from 'zod/v4';
import type { ToolResult } from '../runtime/tool.js';
import { RPC, RpcError } from '../task/errors.js';
import type { InputRequest, JsonObject } from '../task/record.js';
import type { UpstreamTaskWire } from './task-wire-2025.js';
import { TASKS_EXTENSION, WIRE_2026_VERSION } from '../protocol/constants.js';

const InputRequestSchema = z.looseObject({
  method: z.string(),
  params: z.looseObject({}).optional(),
});

const DetailedTaskSchema = z.looseObject({
  taskId: z.string(),
  status: z.enum(['working', 'input_required', 'completed', 'failed', 'cancelled']),
  statusMessage: z.string().optional(),
  pollIntervalMs: z.number().optional(),
  inputRequests: z.record(z.string(), InputRequestSchema).optional(),
  result: z.looseObject({}).optional(),
  error: z.looseObject({ code: z.number(), message: z.string(), data: z.unknown() }).optional(),
});

const AckSchema = z.looseObject({});

/**
 * Catches the `CreateTaskResult` (`resultType: "task"`) of a `tools/call` on its way in. The
 * SDK v2 client (2.4.0) refuses that result type ("Unsupported result type 'task'") and keeps
 * no copy of it, so the proxy reads the task id here, off the transport, and takes the
 * client's refusal as the sign that a task was created. One call per connection (pool.ts)
 * makes the last one caught the one of the call in progress.
 */
export class CreatedTaskCatcher {
  #caught: string | undefined;

  /** Wraps the handler the client installed on `transport` when it connected. */
  watch(transport: Transport): void {
    const deliver = transport.onmessage;
    transport.onmessage = (message, extra) => {
      const result = (message as { result?: Record<string, unknown> }).result;
      if (result?.['resultType'] === 'task' && typeof result['taskId'] === 'string') {
        this.#caught = result['taskId'];
      }
      deliver?.call(transport, message, extra);
    };
  }

  clear(): void {
    this.#caught = undefined;
  }

  take(): string | undefined {
    const taskId = this.#caught;
    this.#caught = undefined;
    return taskId;
  }
}

/**
 * The 2026-07-28 tasks extension over the SDK v2 client, for an upstream that lists it in
 * `server/discover`. The extension is declared only on the requests that want it (the
 * `tools/call`s the proxy makes as tasks, and `tasks/*`): a server must not answer a request
 * that did not declare it with a task, so plain calls stay plain. The server alone decides
 * whether a call becomes a task; the wire has no per-tool `taskSupport`, so every tool is
 * called declaring the extension, and a plain result is taken as it comes.
 */
export function taskWire2026(
  client: Client,
  catcher: CreatedTaskCatcher,
  capabilities: JsonObject,
): UpstreamTaskWire | undefined {
  const extensions = client.getServerCapabilities()?.extensions as JsonObject | undefined;
  if (extensions?.[TASKS_EXTENSION] === undefined) return undefined;
  const declaring = {
    [CLIENT_CAPABILITIES_META_KEY]: {
      ...capabilities,
      extensions: { ...(capabilities['extensions'] as JsonObject), [TASKS_EXTENSION]: {} },
    },
  };
  const taskRequest = <T extends z.ZodType>(
    method: string,
    params: JsonObject,
    schema: T,
    options: { signal?: AbortSignal; timeout?: number },
  ): Promise<z.infer<T>> =>
    client.request(
      { method, params: { ...params, _meta: declaring } } as never,
      schema,
      options,
    ) as Promise<z.infer<T>>;
  return {
    wire: WIRE_2026_VERSION,
    runsAsTask: () => true,
    async start(params, { ttlMs: _ttl, ...options }) {
      catcher.clear();
      try {
        const result = await client.callTool({ ...params, _meta: declaring }, options);
        return { result: result as ToolResult };
      } catch (error) {
        const taskId = catcher.take();
        if (taskId === undefined) throw error;
        return { taskId };
      }
    },
    async get(taskId, options) {
      const task = await taskRequest('tasks/get', { taskId }, DetailedTaskSchema, options);
      return {
        status: task.status,
        statusMessage: task.statusMessage,
        pollIntervalMs: task.pollIntervalMs,
        inputRequests: task.inputRequests as Record<string, InputRequest> | undefined,
        result: task.result as ToolResult | undefined,
        error: task.error,
      };
    },
    outcome(taskId, state) {
      if (state.status === 'completed') {
        const { resultType: _type, ...result } = state.result ?? {};
        return Promise.resolve(result as ToolResult);
      }
      if (state.status === 'failed') {
        const error = state.error ?? {
          code: RPC.INTERNAL_ERROR,
          message: `upstream task ${taskId} failed`,
        };
        return Promise.reject(new RpcError(error.code, error.message, error.data));
      }
      return Promise.resolve(undefined);
    },
    async answer(taskId, responses, options) {
      await taskRequest('tasks/update', { taskId, inputResponses: responses }, AckSchema, options);
    },
    async cancel(taskId) {
      await taskRequest('tasks/cancel', { taskId }, AckSchema, {});
    },
  };
}
