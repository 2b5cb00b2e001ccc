import { setTimeout as sleep } from 'node:timers/promises';
import { accepts2025ToolTasks, relatedTaskMeta } from '../protocol/wire-2025.js';
import { backoffDelayMs, type Backoff } from '../task/backoff.js';
import type { JsonRpcErrorObject } from '../task/errors.js';
import { sameCaller } from './credentials.js';
import { isClientError, TaskrailClientError, unknownUnderCredentialsError } from './errors.js';
import { answerInputRequests, inputCapabilities, type InputHandlers } from './input.js';
import { isFinal, type LedgerEntry, type LedgerStatus, type TaskLedger } from './ledger-port.js';
import { TOOLS_CALL_METHOD, WIRE_2025_VERSION } from '../protocol/constants.js';
import { SessionResourcePush } from './resource-push-2025.js';
import { Session2025, type ServerRequestHandler } from './session-2025.js';
import type { CallOutcome } from './outcome.js';
import type { RpcReply } from './rpc-http.js';
import { SchemaChecker } from './schema-check.js';
import { judgeResult, outcomeFromEntry, type TaskEvent } from './task-watch.js';
import { settledCall, type ToolCall } from './tool-call.js';
import type { CallToolResult } from './wire.js';
import { timerDelay } from '../task/timers.js';

type JsonObject = Record<string, unknown>;
type Tool2025 = { name: string; outputSchema?: JsonObject; execution?: { taskSupport?: string } };

export interface Peer2025Options {
  url: string;
  bearer?: string;
  headers?: Record<string, string>;
  fetch?: typeof fetch;
  clientInfo: { name: string; version: string };
  ledger: TaskLedger;
  input: InputHandlers;
  defaultPollIntervalMs: number;
  background: boolean;
  /** False: never task-augment (`--no-tasks`). */
  tasks: boolean;
  onEvent?: (event: TaskEvent) => void;
  /** How long following a task rides out a dropped connection (a server restart); 10 s. */
  connectionGraceMs?: number;
}

/**
 * A first 2026-07-28 request that got no JSON-RPC answer may mean a server that speaks only
 * 2025-11-25: try `initialize`. Resolves with the peer, or rethrows the original error.
 */
export async function detectPeer2025(options: Peer2025Options, error: unknown): Promise<Peer2025> {
  if (!isClientError(error, 'CONNECTION') || !/HTTP 4\d\d/.test(error.message)) throw error;
  try {
    return await openPeer2025(options);
  } catch {
    throw error;
  }
}

/** Opens a 2025-11-25 session with the server (`initialize`), e.g. to follow a ledger task. */
export async function openPeer2025(options: Peer2025Options): Promise<Peer2025> {
  const session = await Session2025.open({
    ...options,
    capabilities: {
      ...inputCapabilities(options.input),
      tasks: {
        cancel: {},
        requests: { elicitation: { create: {} }, sampling: { createMessage: {} } },
      },
    },
  });
  return new Peer2025(session, options);
}

/** True for a ledger task created on the 2025-11-25 wire (followed through a session). */
export function isEntry2025(entry: LedgerEntry): boolean {
  return entry.protocolVersion === WIRE_2025_VERSION;
}

/**
 * `tasks answer` on a 2025-11-25 task: on that wire its questions travel on the `tasks/result`
 * stream of whoever follows it, so only an ended task has an answer here.
 */
export function answerOnce2025(
  entry: LedgerEntry,
): Promise<{ outcome: CallOutcome; answered: string[] }> {
  if (isFinal(entry.status))
    return Promise.resolve({ outcome: outcomeFromEntry(entry), answered: [] });
  throw new TaskrailClientError(
    'USAGE',
    `task ${entry.id} was created on the 2025-11-25 wire: its questions are asked while it is followed; run \`taskrail tasks wait ${entry.id}\``,
  );
}

/** Calls tools on a 2025-11-25 server: tasks where the tool allows them, plain calls otherwise. */
export class Peer2025 {
  readonly session: Session2025;
  readonly options: Peer2025Options;
  readonly checker = new SchemaChecker();
  #tools: Promise<Tool2025[]> | undefined;
  #resourcePush: SessionResourcePush | undefined;

  constructor(session: Session2025, options: Peer2025Options) {
    this.session = session;
    this.options = options;
  }

  /** The session's resource subscriptions, when the server offers them. */
  resourcePush(): SessionResourcePush | undefined {
    if (!SessionResourcePush.offered(this.session)) return undefined;
    this.#resourcePush ??= new SessionResourcePush(this.session);
    return this.#resourcePush;
  }

  async callTool(
    name: string,
    args: JsonObject,
    options: { background?: boolean; signal?: AbortSignal },
  ): Promise<ToolCall> {
    const tool = (await this.#listTools()).find((entry) => entry.name === name);
    const support = tool?.execution?.taskSupport;
    const asTask =
      this.options.tasks &&
      accepts2025ToolTasks(this.session.serverCapabilities) &&
      (support === 'optional' || support === 'required');
    const params: JsonObject = { name, arguments: args, ...(asTask ? { task: {} } : {}) };
    const reply = await this.session.request(TOOLS_CALL_METHOD, params, {
      onRequest: this.inputHandler(name, undefined, options.signal),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    if (reply.kind === 'error') return settledCall({ kind: 'failed', error: reply.error });
    const task = reply.result['task'] as JsonObject | undefined;
    if (!asTask || task === undefined) {
      return settledCall(
        judgeResult(reply.result as CallToolResult, tool?.outputSchema, this.checker),
      );
    }
    const taskId = String(task['taskId']);
    const pollIntervalMs =
      typeof task['pollInterval'] === 'number'
        ? task['pollInterval']
        : this.options.defaultPollIntervalMs;
    this.options.ledger.record({
      id: taskId,
      server: this.options.url,
      tool: name,
      arguments: args,
      status: 'working',
      pollIntervalMs,
      nextPollAt: Date.now() + pollIntervalMs,
      ttlMs: typeof task['ttl'] === 'number' ? task['ttl'] : null,
      ...(tool?.outputSchema === undefined ? {} : { outputSchema: tool.outputSchema }),
      ...(this.options.bearer === undefined ? {} : { bearer: this.options.bearer }),
      ownerPid: process.pid,
      protocolVersion: WIRE_2025_VERSION,
    });
    return this.attach(taskId, options);
  }

  /**
   * Follows a 2025-11-25 task of the ledger on this session: the one `callTool` just created,
   * or one a process that has since died created (the task lives on the server, not in the
   * session, so a new session reaches it). A final entry answers from the ledger.
   */
  async attach(
    taskId: string,
    options: { background?: boolean; signal?: AbortSignal },
  ): Promise<ToolCall> {
    const entry = this.options.ledger.require(taskId);
    if (isFinal(entry.status)) return settledCall(outcomeFromEntry(entry));
    this.options.ledger.setOwner(taskId, process.pid);
    const call = new TaskCall2025(this, taskId, entry.tool, entry.outputSchema, options.signal);
    const background = options.background ?? this.options.background;
    if (!background) await call.result();
    return call;
  }

  /** Input requests from the server, answered through the host's handlers. */
  inputHandler(
    tool: string,
    taskId: string | undefined,
    signal?: AbortSignal,
  ): ServerRequestHandler {
    return async (method, params, key) => {
      const answers = await answerInputRequests(
        { [key]: { method, params } },
        new Set(),
        this.options.input,
        {
          tool,
          ...(taskId === undefined ? {} : { taskId }),
          signal: signal ?? new AbortController().signal,
        },
      );
      const answer = answers[key] ?? {};
      return taskId === undefined ? answer : { ...answer, _meta: relatedTaskMeta(taskId) };
    };
  }

  #listTools(): Promise<Tool2025[]> {
    this.#tools ??= this.session.request('tools/list', {}).then((reply) => {
      if (reply.kind === 'error') return [];
      const tools = reply.result['tools'];
      return Array.isArray(tools) ? (tools as Tool2025[]) : [];
    });
    return this.#tools;
  }
}

const ACTIVE = new Set(['working', 'input_required']);
/** Riding out a restart: 100 ms, 200 ms, … up to 2 s between tries. */
const RIDE_OUT: Backoff = { backoffMs: 100, maxBackoffMs: 2000 };

/**
 * Follows one 2025-11-25 task: polls `tasks/get`, then collects `tasks/result` (answering its
 * questions).
 */
class TaskCall2025 implements ToolCall {
  readonly taskId: string;
  #outcome: CallOutcome | undefined;
  readonly #peer: Peer2025;
  readonly #tool: string;
  readonly #outputSchema: JsonObject | undefined;
  readonly #controller = new AbortController();
  readonly #running: Promise<CallOutcome>;
  #cancelRequested = false;

  constructor(
    peer: Peer2025,
    taskId: string,
    tool: string,
    outputSchema: JsonObject | undefined,
    signal?: AbortSignal,
  ) {
    this.#peer = peer;
    this.taskId = taskId;
    this.#tool = tool;
    this.#outputSchema = outputSchema;
    signal?.addEventListener('abort', () => this.detach(), { once: true });
    this.#running = this.#run()
      .then((outcome) => (this.#outcome = outcome))
      .finally(() => this.#release());
    this.#running.catch(() => undefined);
  }

  get outcome(): CallOutcome | undefined {
    return this.#outcome;
  }

  result(): Promise<CallOutcome> {
    return this.#running;
  }

  async cancel(): Promise<CallOutcome> {
    if (this.#outcome !== undefined) return this.#outcome;
    this.#cancelRequested = true;
    this.#peer.options.onEvent?.({ type: 'cancel-sent', taskId: this.taskId });
    await this.#request('tasks/cancel', 30_000);
    return this.#running;
  }

  detach(): void {
    this.#controller.abort(new TaskrailClientError('USAGE', 'detached'));
  }

  /** No longer watched here: another process (`tasks resume`) may take the task. */
  #release(): void {
    const { ledger } = this.#peer.options;
    if (ledger.get(this.taskId)?.ownerPid === process.pid) ledger.setOwner(this.taskId, undefined);
  }

  /**
   * One request about the task. The server was reached (it made the task, or the session is
   * open), so a dropped connection is a restart to ride out: the request is sent again, with
   * backoff, until `connectionGraceMs` passes without an answer (a forgotten session is
   * reopened by the session itself; the task outlives it).
   */
  async #request(
    method: string,
    timeoutMs: number,
    onRequest?: ServerRequestHandler,
  ): Promise<RpcReply> {
    const options = {
      signal: this.#controller.signal,
      timeoutMs,
      ...(onRequest === undefined ? {} : { onRequest }),
    };
    const graceMs = this.#peer.options.connectionGraceMs ?? 10_000;
    let graceEnds: number | undefined;
    for (let retry = 1; ; retry += 1) {
      try {
        return await this.#peer.session.request(method, { taskId: this.taskId }, options);
      } catch (error) {
        this.#controller.signal.throwIfAborted();
        if (!isClientError(error, 'CONNECTION')) throw error;
        // Counted from the first failure: a long `tasks/result` had the server until then.
        graceEnds ??= Date.now() + graceMs;
        if (Date.now() > graceEnds) throw error;
        await sleep(backoffDelayMs(RIDE_OUT, retry), undefined, {
          signal: this.#controller.signal,
        });
      }
    }
  }

  async #run(): Promise<CallOutcome> {
    const { ledger, defaultPollIntervalMs } = this.#peer.options;
    for (;;) {
      const reply = await this.#request('tasks/get', 30_000);
      if (reply.kind === 'error') return this.#lost(reply.error);
      const status = String(reply.result['status']) as LedgerStatus;
      const statusMessage = reply.result['statusMessage'];
      const pollIntervalMs =
        typeof reply.result['pollInterval'] === 'number'
          ? reply.result['pollInterval']
          : defaultPollIntervalMs;
      this.#peer.options.onEvent?.({
        type: 'status',
        taskId: this.taskId,
        status,
        pollIntervalMs,
        ...(typeof statusMessage === 'string' ? { statusMessage } : {}),
      });
      if (status === 'cancelled')
        return this.#settle('cancelled', { kind: 'cancelled', taskId: this.taskId });
      if (!ACTIVE.has(status) || (status === 'input_required' && !this.#cancelRequested)) break;
      ledger.observe(this.taskId, {
        status,
        pollIntervalMs,
        nextPollAt: Date.now() + pollIntervalMs,
      });
      await sleep(timerDelay(pollIntervalMs), undefined, { signal: this.#controller.signal });
    }
    return this.#collect();
  }

  /** `tasks/result` blocks until the end, carrying the task's questions on its stream. */
  async #collect(): Promise<CallOutcome> {
    const onRequest = this.#peer.inputHandler(this.#tool, this.taskId, this.#controller.signal);
    const reply = await this.#request('tasks/result', 0, onRequest);
    if (reply.kind === 'error') return this.#failed(reply.error);
    const { _meta: _related, ...result } = reply.result;
    const outcome = judgeResult(
      result as CallToolResult,
      this.#outputSchema,
      this.#peer.checker,
      this.taskId,
    );
    return this.#settle('completed', outcome, result);
  }

  async #failed(error: JsonRpcErrorObject): Promise<CallOutcome> {
    const state = await this.#request('tasks/get', 30_000);
    if (state.kind === 'result' && state.result['status'] === 'cancelled') {
      return this.#settle('cancelled', { kind: 'cancelled', taskId: this.taskId });
    }
    return this.#settle('failed', { kind: 'failed', taskId: this.taskId, error }, undefined, error);
  }

  /** Lost only when the server says so to the credentials the task was created with. */
  #lost(error: JsonRpcErrorObject): CallOutcome {
    const { ledger, bearer, url } = this.#peer.options;
    if (!sameCaller(ledger.require(this.taskId).bearer, bearer)) {
      throw unknownUnderCredentialsError(url, this.taskId);
    }
    return this.#settle('lost', { kind: 'lost', taskId: this.taskId, error });
  }

  #settle(
    status: LedgerStatus,
    outcome: CallOutcome,
    result?: JsonObject,
    error?: JsonRpcErrorObject,
  ): CallOutcome {
    this.#peer.options.ledger.settle(this.taskId, {
      status,
      outcome: outcome.kind,
      ...(result === undefined ? {} : { result }),
      ...(error === undefined ? {} : { error }),
    });
    return outcome;
  }
}
