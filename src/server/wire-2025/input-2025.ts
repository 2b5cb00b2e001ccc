import type { ServerContext } from '@modelcontextprotocol/server';
import { relatedTaskMeta } from '../../protocol/wire-2025.js';
import type { InputRequest, JsonObject, TaskRecord } from '../../task/record.js';
import { pendingInputRequests } from '../../task/record.js';
import type { Wire2025Deps } from './deps.js';

/** A person may take a while to answer; the SDK default (60 s) is far too short. */
const INPUT_TIMEOUT_MS = 24 * 60 * 60 * 1000;

type Send = (request: { method: string; params?: JsonObject }, options: object) => Promise<unknown>;

/**
 * Sends one input request to the client as a real JSON-RPC request on the stream of the
 * request being served (2025-11-25 input: `elicitation/create` / `sampling/createMessage`), tagged with
 * the related task when there is one.
 */
export async function askClient(
  ctx: ServerContext,
  request: InputRequest,
  taskId: string | undefined,
  signal?: AbortSignal,
): Promise<JsonObject> {
  const params: JsonObject = { ...(request.params ?? {}) };
  if (taskId !== undefined) {
    const meta = (params['_meta'] as JsonObject | undefined) ?? {};
    params['_meta'] = { ...meta, ...relatedTaskMeta(taskId) };
  }
  const send = ctx.mcpReq.send as unknown as Send;
  const options = { timeout: INPUT_TIMEOUT_MS, ...(signal === undefined ? {} : { signal }) };
  return (await send({ method: request.method, params }, options)) as JsonObject;
}

/**
 * Forwards a parked task's pending questions to the client on a `tasks/result` stream and feeds
 * the answers to the runtime. A key is sent once per process at a time: concurrent
 * `tasks/result` calls do not ask twice, and a dropped stream frees the key for the next one.
 */
export class InputForwarder {
  readonly #deps: Wire2025Deps;
  readonly #ctx: ServerContext;
  readonly #principal: string;
  readonly #mine = new Set<string>();

  constructor(deps: Wire2025Deps, ctx: ServerContext, principal: string) {
    this.#deps = deps;
    this.#ctx = ctx;
    this.#principal = principal;
  }

  offer(task: TaskRecord | undefined): void {
    if (task?.status !== 'input_required') return;
    for (const [key, request] of Object.entries(pendingInputRequests(task))) {
      const slot = `${task.id}\u0000${key}`;
      if (this.#deps.inFlight.has(slot)) continue;
      this.#deps.inFlight.add(slot);
      this.#mine.add(slot);
      void this.#forward(task.id, key, request, slot);
    }
  }

  /** Releases the keys this stream still holds (the stream ended or was dropped). */
  release(): void {
    for (const slot of this.#mine) this.#deps.inFlight.delete(slot);
    this.#mine.clear();
  }

  async #forward(taskId: string, key: string, request: InputRequest, slot: string): Promise<void> {
    try {
      const answer = await askClient(this.#ctx, request, taskId, this.#ctx.mcpReq.signal);
      await this.#deps.instanceDeps
        .runtime()
        .answerInput(taskId, this.#principal, { [key]: answer });
      this.#deps.inFlight.delete(slot);
      this.#mine.delete(slot);
    } catch (error) {
      // The key stays taken until this stream ends: a client that refuses is not asked again
      // on every poll, but the next `tasks/result` asks afresh.
      this.#deps.logger?.warn('2025-11-25 input request was not answered', {
        taskId,
        key,
        error: String(error),
      });
    }
  }
}
