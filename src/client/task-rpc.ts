import type { DetailedTask } from './wire-types.js';
import type { JsonRpcErrorObject } from '../task/errors.js';
import { TaskrailClientError } from './errors.js';
import type { RawDispatch, RpcReply } from './rpc-http.js';
import { parseAck, parseTaskState, parseTools, type Tool } from './wire.js';

export type Answer<T> = { ok: true; value: T } | { ok: false; error: JsonRpcErrorObject };

/** The `tasks/*` and `tools/list` requests of one server, validated on the way in. */
export class TaskRpc {
  readonly #dispatch: RawDispatch;

  constructor(dispatch: RawDispatch) {
    this.#dispatch = dispatch;
  }

  async get(taskId: string, signal?: AbortSignal): Promise<Answer<DetailedTask>> {
    const reply = await this.#send('tasks/get', { taskId }, signal);
    if (reply.kind === 'error') return { ok: false, error: reply.error };
    const task = parseTaskState(reply.result);
    if (task.taskId !== taskId) {
      throw new TaskrailClientError(
        'PROTOCOL',
        `tasks/get for ${taskId} answered about ${task.taskId}`,
      );
    }
    return { ok: true, value: task };
  }

  async update(
    taskId: string,
    inputResponses: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<Answer<void>> {
    const reply = await this.#send('tasks/update', { taskId, inputResponses }, signal);
    if (reply.kind === 'error') return { ok: false, error: reply.error };
    parseAck(reply.result, 'tasks/update');
    return { ok: true, value: undefined };
  }

  async cancel(taskId: string, signal?: AbortSignal): Promise<Answer<void>> {
    const reply = await this.#send('tasks/cancel', { taskId }, signal);
    if (reply.kind === 'error') return { ok: false, error: reply.error };
    parseAck(reply.result, 'tasks/cancel');
    return { ok: true, value: undefined };
  }

  /** Every page of `tools/list`. */
  async listTools(signal?: AbortSignal): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const reply = await this.#send('tools/list', cursor === undefined ? {} : { cursor }, signal);
      if (reply.kind === 'error') {
        throw new TaskrailClientError(
          'PROTOCOL',
          `tools/list failed: ${reply.error.code} ${reply.error.message}`,
        );
      }
      const parsed = parseTools(reply.result);
      tools.push(...parsed.tools);
      cursor = parsed.nextCursor;
      if (cursor === undefined) break;
    }
    return tools;
  }

  /** Any other request (e.g. `resources/read`), answered as it came. */
  request(
    method: string,
    params: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<RpcReply> {
    return this.#send(method, params, signal);
  }

  #send(method: string, params: Record<string, unknown>, signal?: AbortSignal): Promise<RpcReply> {
    return this.#dispatch({ method, params }, signal === undefined ? {} : { signal });
  }
}
