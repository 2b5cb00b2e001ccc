import type { CallToolOptions, TaskrailClientOptions } from './client-options.js';
import { TaskrailClientError, isClientError, serverTroubleError } from './errors.js';
import { inputCapabilities, answerInputRequests } from './input.js';
import { Ledger, type LedgerEntry, type TaskLedger } from './ledger.js';
import { packageVersion } from './package-version.js';
import type { CallOutcome } from './outcome.js';
import {
  createHttpDispatch,
  PROTOCOL_VERSION,
  TASKS_EXTENSION_ID,
  type RawDispatch,
  type RequestFraming,
} from './rpc-http.js';
import { SchemaChecker } from './schema-check.js';
import { TaskSubscriber } from './subscribe.js';
import { TaskRpc } from './task-rpc.js';
import { judgeResult, TaskWatch, type WatchDeps } from './task-watch.js';
import { settledCall, WatchedCall, type ToolCall } from './tool-call.js';
import { parseToolCallReply, type Tool } from './wire.js';
import type { DetailedTask } from './wire-types.js';
import {
  detectPeer2025,
  isEntry2025,
  answerOnce2025,
  openPeer2025,
  type Peer2025,
  type Peer2025Options,
} from './call-2025.js';
import { idempotencyMeta, sendToolCall } from './keyed-call.js';
import type { ListenConnection } from './listen-stream.js';
import { parseTaskResourceUri } from './resources.js';
import { ResourcePush } from './resource-push.js';
import { TaskResources, type ResourceWire } from './resources-client.js';

export type { CallToolOptions, TaskrailClientOptions } from './client-options.js';

const MAX_MRTR_ROUNDS = 8;
const clientInfo = (): { name: string; version: string } => ({
  name: 'taskrail',
  version: packageVersion(),
});

/** A host's connection to one MCP server: calls tools that may become tasks, with a durable ledger. */
export class TaskrailClient {
  readonly url: string;
  readonly ledger: TaskLedger;
  readonly #options: TaskrailClientOptions;
  readonly #ownsLedger: boolean;
  readonly #callDispatch: RawDispatch;
  readonly #rpc: TaskRpc;
  readonly #checker = new SchemaChecker();
  readonly #push: TaskSubscriber | undefined;
  readonly #listen: ListenConnection;
  /** Shortened results read whole, slices of them, and task output as it grows. */
  readonly resources: TaskResources;
  #tools: Promise<Tool[]> | undefined;
  /** Set once the server turned out to speak only 2025-11-25 (call-2025.ts). */
  #peer2025: Peer2025 | undefined;
  #opening: Promise<Peer2025> | undefined;

  constructor(options: TaskrailClientOptions) {
    this.url = new URL(options.url).href;
    this.#options = options;
    this.#ownsLedger = options.ledger === undefined;
    this.ledger = options.ledger ?? Ledger.open(options.home);
    const input = options.input ?? {};
    const base = { url: this.url, ...pick(options, ['bearer', 'headers', 'fetch']) };
    const caps = inputCapabilities(input);
    const withTasks = { ...caps, extensions: { [TASKS_EXTENSION_ID]: {} } };
    this.#callDispatch = createHttpDispatch({
      ...base,
      framing: this.#framing(this.tasksEnabled ? withTasks : caps),
    });
    this.#rpc = new TaskRpc(createHttpDispatch({ ...base, framing: this.#framing(withTasks) }));
    this.#listen = { ...base, framing: this.#framing(withTasks) };
    this.#push =
      options.push === false ? undefined : new TaskSubscriber(this.#listen, options.push);
    this.resources = new TaskResources(
      (taskOrUri) => this.#resourceWire(taskOrUri),
      (taskId) => this.ledger.get(taskId)?.pollIntervalMs ?? this.#defaultPoll(),
    );
  }

  get tasksEnabled(): boolean {
    return this.#options.tasks !== false;
  }

  /** The server's tools (every page of `tools/list`), fetched once. */
  listTools(): Promise<Tool[]> {
    this.#tools ??= this.#rpc.listTools();
    this.#tools.catch(() => (this.#tools = undefined));
    return this.#tools;
  }

  /**
   * Calls a tool. Arguments are checked against its `inputSchema` first (a breach returns a
   * `rejected` outcome and sends nothing). A task is written to the ledger before it is polled.
   */
  async callTool(
    name: string,
    args: Record<string, unknown> = {},
    options: CallToolOptions = {},
  ): Promise<ToolCall> {
    let tool: Tool | undefined;
    try {
      if (this.#peer2025 !== undefined) return await this.#peer2025.callTool(name, args, options);
      tool = await this.#findTool(name);
    } catch (error) {
      if (this.#peer2025 !== undefined) throw error;
      this.#peer2025 = await detectPeer2025(this.#peer2025Options(), error);
      return this.#peer2025.callTool(name, args, options);
    }
    if (tool !== undefined) {
      const errors = this.#checker.check(tool.inputSchema, args);
      if (errors.length > 0) return settledCall({ kind: 'rejected', errors });
    }
    const key = options.idempotencyKey;
    if (key === undefined) return this.#createCall(name, args, tool, options, {});
    const meta = { _meta: idempotencyMeta(key) };
    const bearer = this.#options.bearer;
    this.ledger.recordPending({
      key,
      server: this.url,
      tool: name,
      arguments: args,
      ...(bearer === undefined ? {} : { bearer }),
    });
    try {
      return await this.#createCall(name, args, tool, options, meta);
    } catch (error) {
      // A lost reply leaves the call's fate unknown: it stays pending, for resume() to send again.
      if (!isClientError(error, 'CONNECTION')) this.ledger.dropPending(key);
      throw error;
    }
  }

  /** The `tools/call` rounds of one call, up to the task's ledger entry or the direct answer. */
  async #createCall(
    name: string,
    args: Record<string, unknown>,
    tool: Tool | undefined,
    options: CallToolOptions,
    meta: { _meta?: Record<string, string> },
  ): Promise<ToolCall> {
    const answered = (): void => {
      if (options.idempotencyKey !== undefined) this.ledger.dropPending(options.idempotencyKey);
    };
    const send = (params: Record<string, unknown>) =>
      sendToolCall(this.#callDispatch, params, {
        keyed: options.idempotencyKey !== undefined,
        graceMs: this.#options.connectionGraceMs ?? 10_000,
        signal: options.signal,
      });
    let params: Record<string, unknown> = { name, arguments: args, ...meta };
    for (let round = 0; round <= MAX_MRTR_ROUNDS; round++) {
      const reply = await send(params);
      if (reply.kind === 'error') {
        if (reply.retryable === true) throw serverTroubleError(this.url, reply.error.message);
        answered();
        return settledCall({ kind: 'failed', error: reply.error });
      }
      const parsed = parseToolCallReply(reply.result);
      if (parsed.kind === 'complete') {
        answered();
        return settledCall(judgeResult(parsed.result, tool?.outputSchema, this.#checker));
      }
      if (parsed.kind === 'task') {
        const entry = this.ledger.record({
          id: parsed.task.taskId,
          server: this.url,
          tool: name,
          arguments: args,
          status: parsed.task.status === 'input_required' ? 'input_required' : 'working',
          ...(parsed.task.statusMessage === undefined
            ? {}
            : { statusMessage: parsed.task.statusMessage }),
          pollIntervalMs: parsed.task.pollIntervalMs ?? this.#defaultPoll(),
          nextPollAt: firstPollAt(
            parsed.task.status,
            parsed.task.pollIntervalMs ?? this.#defaultPoll(),
          ),
          ttlMs: parsed.task.ttlMs,
          ...(tool?.outputSchema === undefined ? {} : { outputSchema: tool.outputSchema }),
          ...(this.#options.bearer === undefined ? {} : { bearer: this.#options.bearer }),
          ownerPid: process.pid,
        });
        answered();
        return this.#watchCall(entry.id, options, entry);
      }
      // MRTR before any task exists: answer, then retry with a new id, same requestState.
      const inputResponses = await answerInputRequests(
        parsed.inputRequests,
        new Set(),
        this.#options.input ?? {},
        {
          tool: name,
          signal: options.signal ?? new AbortController().signal,
        },
      );
      params = {
        name,
        arguments: args,
        ...meta,
        inputResponses,
        ...(parsed.requestState === undefined ? {} : { requestState: parsed.requestState }),
      };
    }
    throw new TaskrailClientError(
      'PROTOCOL',
      `tools/call ${name} asked for input more than ${MAX_MRTR_ROUNDS} times`,
    );
  }

  /** Watches a task of this server that is already in the ledger. */
  attach(taskId: string, options: CallToolOptions = {}): Promise<ToolCall> {
    this.#assertMine(taskId);
    return this.#watchCall(taskId, options);
  }

  #assertMine(taskId: string): void {
    const entry = this.ledger.get(taskId);
    if (entry === undefined)
      throw new TaskrailClientError('NOT_FOUND', `no task '${taskId}' in the ledger`);
    if (entry.server !== this.url) {
      throw new TaskrailClientError(
        'USAGE',
        `task ${taskId} belongs to ${entry.server}, not ${this.url}`,
      );
    }
  }

  /** `tasks/cancel`, then waits for the server to report a terminal status. */
  async cancelTask(taskId: string): Promise<CallOutcome> {
    const call = await this.attach(taskId, { background: true });
    return call.cancel();
  }

  /** Answers a parked task's open questions once through the input handlers. */
  answerTask(
    taskId: string,
    signal?: AbortSignal,
  ): Promise<{ outcome?: CallOutcome; answered: string[] }> {
    this.#assertMine(taskId);
    const entry = this.ledger.require(taskId);
    if (isEntry2025(entry)) return answerOnce2025(entry);
    return new TaskWatch(this.#watchDeps(), taskId).answerOnce(signal);
  }

  /**
   * After a crash or restart: sends again, with their keys, the keyed calls whose replies never
   * arrived (a server still unreachable leaves them pending for next time), then reattaches to
   * every unfinished ledger task of this server.
   */
  async resume(options: CallToolOptions = {}): Promise<ToolCall[]> {
    const resent: ToolCall[] = [];
    for (const call of this.ledger.pending(this.url)) {
      const again = await this.callTool(call.tool, call.arguments, {
        ...options,
        background: true,
        idempotencyKey: call.key,
      }).catch((error: unknown) => {
        if (isClientError(error, 'CONNECTION')) return undefined;
        throw error;
      });
      if (again !== undefined) resent.push(again);
    }
    const taken = new Set(resent.map((call) => call.taskId));
    const mine = this.ledger
      .unfinished()
      .filter((entry) => entry.server === this.url && !taken.has(entry.id));
    const watched = await Promise.all(
      mine.map((entry) => this.#watchCall(entry.id, { ...options, background: true })),
    );
    return [...resent, ...watched];
  }

  /** The 2025-11-25 session, opened on first need (a ledger task created on that wire). */
  async #openedPeer2025(): Promise<Peer2025> {
    if (this.#peer2025 !== undefined) return this.#peer2025;
    this.#opening ??= openPeer2025(this.#peer2025Options()).finally(
      () => (this.#opening = undefined),
    );
    this.#peer2025 = await this.#opening;
    return this.#peer2025;
  }

  #peer2025Options(): Peer2025Options {
    return {
      url: this.url,
      ...pick(this.#options, ['bearer', 'headers', 'fetch', 'onEvent', 'connectionGraceMs']),
      clientInfo: this.#options.clientInfo ?? clientInfo(),
      ledger: this.ledger,
      input: this.#options.input ?? {},
      defaultPollIntervalMs: this.#defaultPoll(),
      background: this.#options.background ?? true,
      tasks: this.tasksEnabled,
    };
  }

  /**
   * The server's view of a task now (one `tasks/get`), or undefined when the server does not
   * know it or answers with an error. Reads only: the ledger is not touched.
   */
  async fetchTask(taskId: string, signal?: AbortSignal): Promise<DetailedTask | undefined> {
    const answer = await this.#rpc.get(taskId, signal);
    return answer.ok ? answer.value : undefined;
  }

  /** The wire of the task (by id or resource URI) when the ledger knows it, else the server's. */
  async #resourceWire(taskOrUri?: string): Promise<ResourceWire> {
    const taskId =
      taskOrUri === undefined ? undefined : (parseTaskResourceUri(taskOrUri)?.taskId ?? taskOrUri);
    const entry = taskId === undefined ? undefined : this.ledger.get(taskId);
    if (this.#peer2025 !== undefined || (entry !== undefined && isEntry2025(entry))) {
      const peer = await this.#openedPeer2025();
      const push = this.#options.push === false ? undefined : peer.resourcePush();
      return {
        request: (method, params, signal) =>
          peer.session.request(method, params, signal === undefined ? {} : { signal }),
        ...(push === undefined ? {} : { push: (uri: string) => push.follow(uri) }),
      };
    }
    return {
      request: (method, params, signal) => this.#rpc.request(method, params, signal),
      ...(this.#options.push === false
        ? {}
        : { push: (uri: string) => new ResourcePush(this.#listen, uri) }),
    };
  }

  close(): void {
    void this.#peer2025?.session.close();
    this.#push?.close();
    if (this.#ownsLedger) this.ledger.close();
  }

  /** `known`: the entry the caller has just written for a task it created. */
  async #watchCall(
    taskId: string,
    options: CallToolOptions,
    known?: LedgerEntry,
  ): Promise<ToolCall> {
    const entry = known ?? this.ledger.get(taskId);
    if (entry !== undefined && isEntry2025(entry)) {
      return (await this.#openedPeer2025()).attach(taskId, options);
    }
    const watch = new TaskWatch(this.#watchDeps(), taskId, known && { created: known });
    const call = new WatchedCall(watch, options.signal);
    const background = options.background ?? this.#options.background ?? true;
    if (!background) await call.result();
    return call;
  }

  #watchDeps(): WatchDeps {
    return {
      ledger: this.ledger,
      rpc: this.#rpc,
      input: this.#options.input ?? {},
      checker: this.#checker,
      defaultPollIntervalMs: this.#defaultPoll(),
      ...pick(this.#options, ['connectionGraceMs', 'onEvent', 'bearer']),
      server: this.url,
      ...(this.#push === undefined ? {} : { push: this.#push }),
    };
  }

  async #findTool(name: string): Promise<Tool | undefined> {
    if (this.#options.validateArguments === false) return undefined;
    try {
      return (await this.listTools()).find((tool) => tool.name === name);
    } catch (error) {
      // A server without a usable tools/list still gets the call; only unreachability is fatal.
      if (isClientError(error, 'PROTOCOL')) return undefined;
      throw error;
    }
  }

  #framing(clientCapabilities: Record<string, unknown>): RequestFraming {
    return {
      protocolVersion: PROTOCOL_VERSION,
      clientInfo: this.#options.clientInfo ?? clientInfo(),
      clientCapabilities,
    };
  }

  #defaultPoll(): number {
    return this.#options.defaultPollIntervalMs ?? 1000;
  }
}

/** A handle that is already terminal is fetched at once; otherwise the first poll waits a full interval. */
function firstPollAt(status: string, pollIntervalMs: number): number {
  const terminal = status === 'completed' || status === 'failed' || status === 'cancelled';
  return terminal ? Date.now() : Date.now() + pollIntervalMs;
}

function pick<T extends object, K extends keyof T>(
  source: T,
  keys: readonly K[],
): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const key of keys) if (source[key] !== undefined) out[key] = source[key];
  return out;
}
