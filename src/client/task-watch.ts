import { setTimeout as sleep } from 'node:timers/promises';
import type { DetailedTask } from './wire-types.js';
import { RPC, type JsonRpcErrorObject } from '../task/errors.js';
import { sameCaller } from './credentials.js';
import { isClientError, unknownUnderCredentialsError } from './errors.js';
import { answerInputRequests, type InputHandlers } from './input.js';
import { isFinal, type LedgerEntry, type LedgerStatus, type TaskLedger } from './ledger.js';
import type { CallOutcome } from './outcome.js';
import type { SchemaChecker } from './schema-check.js';
import { waitForTurn, type TaskPush } from './subscribe.js';
import type { Answer, TaskRpc } from './task-rpc.js';
import type { CallToolResult } from './wire.js';
import { backoffDelayMs, type Backoff } from '../task/backoff.js';
import { timerDelay } from '../task/timers.js';

/** Riding out a connection blip: 100 ms, 200 ms, … up to 2 s between tries. */
const RIDE_OUT: Backoff = { backoffMs: 100, maxBackoffMs: 2000 };

export type TaskEvent =
  | {
      type: 'status';
      taskId: string;
      status: LedgerStatus;
      statusMessage?: string;
      pollIntervalMs: number;
    }
  | { type: 'input'; taskId: string; keys: string[] }
  | { type: 'cancel-sent'; taskId: string };

export interface WatchDeps {
  ledger: TaskLedger;
  rpc: TaskRpc;
  input: InputHandlers;
  checker: SchemaChecker;
  defaultPollIntervalMs: number;
  /** How long polling rides out connection failures once the server was reached; default 10 s. */
  connectionGraceMs?: number;
  onEvent?: (event: TaskEvent) => void;
  /** Pushed task states (`subscriptions/listen`); without it the watch only polls. */
  push?: TaskPush;
  /** The server's URL and the bearer token the requests carry (judges a "not found"). */
  server?: string;
  bearer?: string;
}

/**
 * Follows one task from the ledger to its end: polls `tasks/get` no sooner than the last reply's
 * `pollIntervalMs`, answers new `inputRequests` once, sends `tasks/cancel` on request, and
 * records every observation before acting on it.
 */
export class TaskWatch {
  readonly taskId: string;
  readonly #deps: WatchDeps;
  #cancelRequested = false;
  #reached = false;
  /** The entry its creator just wrote from the server's answer: the first `run` starts from it. */
  #created: LedgerEntry | undefined;

  /**
   * `created`: the ledger entry this process has just written for the task it created. The
   * server was reached then (a restart is ridden out), and the first run needs no read.
   */
  constructor(deps: WatchDeps, taskId: string, { created }: { created?: LedgerEntry } = {}) {
    this.#deps = deps;
    this.taskId = taskId;
    this.#reached = created !== undefined;
    this.#created = created;
  }

  /**
   * Sends `tasks/cancel` now; `run()` keeps polling until the server reports a terminal status.
   * The `cancel-sent` event goes out as the request does: the terminal status may be pushed or
   * polled before the cancel's own reply arrives, and must not read as coming first.
   */
  async requestCancel(signal?: AbortSignal): Promise<void> {
    this.#cancelRequested = true;
    this.#deps.onEvent?.({ type: 'cancel-sent', taskId: this.taskId });
    const answer = await this.#retrying(() => this.#deps.rpc.cancel(this.taskId, signal), signal);
    if (!answer.ok && answer.error.code === RPC.INVALID_PARAMS) this.#settleLost(answer.error);
  }

  async run(signal?: AbortSignal): Promise<CallOutcome> {
    const { ledger } = this.#deps;
    let entry = this.#created ?? ledger.require(this.taskId);
    this.#created = undefined;
    if (entry.ownerPid !== process.pid) ledger.setOwner(this.taskId, process.pid);
    const follower = this.#deps.push?.follow(this.taskId);
    let settledHere = false;
    try {
      for (;;) {
        if (isFinal(entry.status)) return outcomeFromEntry(entry);
        const pushed = await waitForTurn(follower, entry.nextPollAt, signal);
        // A pushed state came from the server as surely as a polled one: a restart is a blip.
        if (pushed !== undefined) this.#reached = true;
        const answer =
          pushed ?? (await this.#retrying(() => this.#deps.rpc.get(this.taskId, signal), signal));
        if (!answer.ok) {
          settledHere = answer.error.code === RPC.INVALID_PARAMS;
          if (settledHere) return this.#settleLost(answer.error);
          throw new Error(`tasks/get failed: ${answer.error.code} ${answer.error.message}`);
        }
        if (pushed !== undefined && unchangedWork(entry, answer.value)) {
          this.#emitStatus(answer.value);
          continue;
        }
        const outcome = this.#observe(entry, answer.value);
        settledHere = outcome !== undefined;
        if (outcome !== undefined) return outcome;
        if (answer.value.status === 'input_required' && !this.#cancelRequested) {
          await this.#answer(answer.value.inputRequests, signal);
        }
        entry = ledger.require(this.taskId);
      }
    } finally {
      follower?.close();
      // A settlement clears the owner itself; otherwise hand the task back if it is still ours.
      if (!settledHere && ledger.get(this.taskId)?.ownerPid === process.pid)
        ledger.setOwner(this.taskId, undefined);
    }
  }

  /**
   * One look at the task, answering its open questions if it is parked (`taskrail tasks answer`).
   * Returns the outcome when the task turned out to be terminal, else the keys answered.
   */
  async answerOnce(signal?: AbortSignal): Promise<{ outcome?: CallOutcome; answered: string[] }> {
    const { ledger } = this.#deps;
    const entry = ledger.require(this.taskId);
    if (isFinal(entry.status)) return { outcome: outcomeFromEntry(entry), answered: [] };
    await sleepUntil(entry.nextPollAt, signal);
    const answer = await this.#deps.rpc.get(this.taskId, signal);
    this.#reached = true;
    if (!answer.ok) {
      if (answer.error.code === RPC.INVALID_PARAMS)
        return { outcome: this.#settleLost(answer.error), answered: [] };
      throw new Error(`tasks/get failed: ${answer.error.code} ${answer.error.message}`);
    }
    const outcome = this.#observe(entry, answer.value);
    if (outcome !== undefined) return { outcome, answered: [] };
    if (answer.value.status !== 'input_required') return { answered: [] };
    const before = new Set(ledger.require(this.taskId).answeredKeys);
    await this.#answer(answer.value.inputRequests, signal);
    return { answered: ledger.require(this.taskId).answeredKeys.filter((key) => !before.has(key)) };
  }

  #emitStatus(task: DetailedTask): void {
    this.#deps.onEvent?.({
      type: 'status',
      taskId: this.taskId,
      status: task.status,
      pollIntervalMs: task.pollIntervalMs ?? this.#deps.defaultPollIntervalMs,
      ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
    });
  }

  #observe(entry: LedgerEntry, task: DetailedTask): CallOutcome | undefined {
    const pollIntervalMs = task.pollIntervalMs ?? this.#deps.defaultPollIntervalMs;
    const status = task.status;
    this.#emitStatus(task);
    if (status === 'working' || status === 'input_required') {
      this.#deps.ledger.observe(this.taskId, {
        status,
        pollIntervalMs,
        nextPollAt: Date.now() + pollIntervalMs,
        ttlMs: task.ttlMs,
        ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
        ...(status === 'input_required' ? { inputRequests: task.inputRequests } : {}),
      });
      return undefined;
    }
    const outcome = this.#terminalOutcome(entry, task);
    this.#deps.ledger.settle(this.taskId, {
      status,
      outcome: outcome.kind,
      ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
      ...(status === 'completed' ? { result: task.result } : {}),
      ...(status === 'failed' ? { error: task.error } : {}),
    });
    return outcome;
  }

  #terminalOutcome(entry: LedgerEntry, task: DetailedTask): CallOutcome {
    const taskId = this.taskId;
    if (task.status === 'failed') return { kind: 'failed', taskId, error: task.error };
    if (task.status === 'completed') {
      const result = task.result as CallToolResult;
      return judgeResult(result, entry.outputSchema, this.#deps.checker, taskId);
    }
    return {
      kind: 'cancelled',
      taskId,
      ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
    };
  }

  async #answer(requests: Record<string, unknown>, signal?: AbortSignal): Promise<void> {
    const { ledger } = this.#deps;
    const entry = ledger.require(this.taskId);
    const skip = new Set(entry.answeredKeys);
    if (Object.keys(requests).every((key) => skip.has(key))) return;
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      let responses: Record<string, Record<string, unknown>>;
      try {
        responses = await answerInputRequests(requests, skip, this.#deps.input, {
          taskId: this.taskId,
          tool: entry.tool,
          signal: controller.signal,
        });
      } catch (error) {
        // A prompt interrupted by a cancel is expected: keep polling until the server says terminal.
        if (this.#cancelRequested) return;
        throw error;
      }
      const keys = Object.keys(responses);
      if (keys.length === 0 || this.#cancelRequested) return;
      const answer = await this.#retrying(
        () => this.#deps.rpc.update(this.taskId, responses, signal),
        signal,
      );
      if (!answer.ok && answer.error.code !== RPC.INVALID_PARAMS) {
        throw new Error(`tasks/update failed: ${answer.error.code} ${answer.error.message}`);
      }
      // A -32602 here means the task is gone; the next tasks/get settles it as lost.
      ledger.markAnswered(this.taskId, keys);
      this.#deps.onEvent?.({ type: 'input', taskId: this.taskId, keys });
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * A "not found" means lost only when asked with the credentials the task was created with;
   * under others it is the answer any stranger gets, and the ledger entry stays as it is.
   */
  #settleLost(error: JsonRpcErrorObject): CallOutcome {
    const entry = this.#deps.ledger.require(this.taskId);
    if (!sameCaller(entry.bearer, this.#deps.bearer)) {
      throw unknownUnderCredentialsError(this.#deps.server ?? entry.server, this.taskId);
    }
    this.#deps.ledger.settle(this.taskId, {
      status: 'lost',
      outcome: 'lost',
      error,
      statusMessage: error.message,
    });
    this.#deps.onEvent?.({
      type: 'status',
      taskId: this.taskId,
      status: 'lost',
      statusMessage: error.message,
      pollIntervalMs: 0,
    });
    return { kind: 'lost', taskId: this.taskId, error };
  }

  /**
   * A connection blip after the server was reached once is ridden out for a grace period; a
   * server that cannot be reached at all fails at once (so `resume` can say so quickly).
   */
  async #retrying<T>(send: () => Promise<Answer<T>>, signal?: AbortSignal): Promise<Answer<T>> {
    const graceEnds = Date.now() + (this.#deps.connectionGraceMs ?? 10_000);
    for (let retry = 1; ; retry += 1) {
      const delay = backoffDelayMs(RIDE_OUT, retry);
      try {
        const answer = await send();
        this.#reached = true;
        return answer;
      } catch (error) {
        if (!isClientError(error, 'CONNECTION') || !this.#reached || Date.now() > graceEnds)
          throw error;
        await sleep(timerDelay(delay), undefined, signal ? { signal } : {});
      }
    }
  }
}

/**
 * A pushed `working` state that says nothing the ledger does not already hold. It is not
 * written: a pushed state is no poll, so the poll pacing it would move (`nextPollAt`) does not
 * apply, and a stream that breaks re-reads at once anyway.
 */
function unchangedWork(entry: LedgerEntry, task: DetailedTask): boolean {
  return (
    task.status === 'working' &&
    entry.status === 'working' &&
    task.statusMessage === entry.statusMessage &&
    (task.pollIntervalMs ?? entry.pollIntervalMs) === entry.pollIntervalMs &&
    (task.ttlMs === undefined || task.ttlMs === entry.ttlMs)
  );
}

/** Tool error, output-schema breach or plain success: the three ends of a completed call. */
export function judgeResult(
  result: CallToolResult,
  outputSchema: Record<string, unknown> | undefined,
  checker: SchemaChecker,
  taskId?: string,
): CallOutcome {
  const id = taskId === undefined ? {} : { taskId };
  if (result.isError === true) return { kind: 'tool_error', ...id, result };
  if (outputSchema !== undefined) {
    const errors =
      result.structuredContent === undefined
        ? ['structuredContent is missing but the tool declares an outputSchema']
        : checker.check(outputSchema, result.structuredContent);
    if (errors.length > 0) return { kind: 'invalid_output', ...id, result, errors };
  }
  return { kind: 'completed', ...id, result };
}

/** The outcome a settled ledger row stands for (for `tasks wait` on a finished task). */
export function outcomeFromEntry(entry: LedgerEntry): CallOutcome {
  const taskId = entry.id;
  const result = (entry.result ?? { content: [] }) as CallToolResult;
  const error = entry.error ?? {
    code: RPC.INTERNAL_ERROR,
    message: entry.statusMessage ?? 'unknown error',
  };
  switch (entry.outcome) {
    case 'completed':
      return { kind: 'completed', taskId, result };
    case 'tool_error':
      return { kind: 'tool_error', taskId, result };
    case 'invalid_output':
      return {
        kind: 'invalid_output',
        taskId,
        result,
        errors: ['structuredContent breaks the outputSchema'],
      };
    case 'failed':
      return { kind: 'failed', taskId, error };
    case 'lost':
      return { kind: 'lost', taskId, error };
    default:
      return entry.statusMessage === undefined
        ? { kind: 'cancelled', taskId }
        : { kind: 'cancelled', taskId, statusMessage: entry.statusMessage };
  }
}

async function sleepUntil(at: number, signal?: AbortSignal): Promise<void> {
  const wait = at - Date.now();
  if (wait > 0) await sleep(timerDelay(wait), undefined, signal ? { signal } : {});
  else signal?.throwIfAborted();
}
