import { followOutputOf, type FollowOptions, type OutputSource } from './output-follow.js';
import type { OutputPush } from './push-notes.js';
import {
  parsePage,
  readToEnd,
  taskResourceUri,
  wholeResult,
  withRange,
  type Range,
  type ReadPage,
} from './resources.js';
import type { RpcReply } from './rpc-http.js';
import type { CallToolResult } from './wire.js';

/** How resource requests reach one server: on either wire, with push where it has it. */
export interface ResourceWire {
  request(method: string, params: Record<string, unknown>, signal?: AbortSignal): Promise<RpcReply>;
  /**
   * A subscription to one resource's updates: a `subscriptions/listen` stream on 2026-07-28,
   * `resources/subscribe` on a 2025-11-25 session; absent when the server offers none (polled).
   */
  push?: (uri: string) => OutputPush;
}

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

export function pageReader(wire: ResourceWire): ReadPage {
  return async (uri, signal) =>
    parsePage(uri, await wire.request('resources/read', { uri }, signal));
}

/** A task's output as it grows, on the given wire. */
export function followTaskOutput(
  wire: ResourceWire,
  taskId: string,
  options: FollowOptions = {},
): AsyncGenerator<string, void, undefined> {
  const uri = taskResourceUri(taskId, 'output');
  const push = wire.push?.(uri);
  const source: OutputSource = {
    read: pageReader(wire),
    ended: async (signal) => {
      const reply = await wire.request('tasks/get', { taskId }, signal);
      // A task the server no longer knows has no more output to give.
      if (reply.kind === 'error') return true;
      return TERMINAL.has(String(reply.result['status']));
    },
    ...(push === undefined ? {} : { push }),
  };
  return followOutputOf(source, uri, options);
}

/**
 * `client.resources`: the task resources of one server (interface.md "Results of any size,
 * output while running"), each request on the wire its task was created on.
 */
export class TaskResources {
  readonly #wireFor: (taskOrUri?: string) => Promise<ResourceWire>;
  readonly #pollFor: (taskId: string) => number;

  constructor(
    wireFor: (taskOrUri?: string) => Promise<ResourceWire>,
    pollFor: (taskId: string) => number,
  ) {
    this.#wireFor = wireFor;
    this.#pollFor = pollFor;
  }

  /**
   * One `resources/read`: the text of `uri`, or the slice `range` of it (UTF-16 code units; the
   * server caps one read at its `--max-result-chars`). Rejects with `NOT_FOUND` when the server
   * does not know the resource or it is not the caller's.
   */
  async read(uri: string, range: Range & { signal?: AbortSignal } = {}): Promise<string> {
    const plain = range.offset === undefined && range.length === undefined;
    const target = plain ? uri : withRange(uri, range);
    return (await pageReader(await this.#wireFor(uri))(target, range.signal)).text;
  }

  /** The text of `uri` from `offset` (default 0) to its end, read page by page. */
  async readWhole(
    uri: string,
    options: { offset?: number; signal?: AbortSignal } = {},
  ): Promise<string> {
    return readToEnd(pageReader(await this.#wireFor(uri)), uri, options);
  }

  /**
   * A result as the tool returned it: a shortened one (a `resource_link` to
   * `taskrail://tasks/ID/result` or `/structured`) gets its whole text and `structuredContent`
   * read back; any other result is handed back as it is.
   */
  async wholeResult(result: CallToolResult, signal?: AbortSignal): Promise<CallToolResult> {
    return wholeResult(pageReader(await this.#wireFor()), result, signal);
  }

  /**
   * A task's output (`ctx.output`) as it grows, chunk by chunk, until the task has ended and
   * all of it is read: read when the server's resource subscription says it grew (on either
   * wire, when the server offers one), else polled with `resources/read` from the offset read
   * so far.
   */
  async *followOutput(taskId: string, options: FollowOptions = {}): AsyncGenerator<string> {
    const wire = await this.#wireFor(taskId);
    yield* followTaskOutput(wire, taskId, { pollIntervalMs: this.#pollFor(taskId), ...options });
  }
}
