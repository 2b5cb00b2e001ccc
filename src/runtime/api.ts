import type { PermitAsk, TaskStore } from '../store/port.js';
import type { JsonObject, TaskRecord, TaskWire } from '../task/record.js';
import type { InputRequest } from '../task/record.js';
import type { Clock } from '../task/time.js';
import type { RunnableTool, ToolResult } from './tool.js';

/** Finds a tool by name; the server's registry implements it. */
export interface ToolCatalog {
  get(name: string): RunnableTool | undefined;
}

export interface Logger {
  /** Per-request lines; optional so existing loggers keep working (they just skip them). */
  debug?(message: string, fields?: JsonObject): void;
  info(message: string, fields?: JsonObject): void;
  warn(message: string, fields?: JsonObject): void;
  error(message: string, fields?: JsonObject): void;
  /**
   * Whether records of `level` are written at all. Optional: without it every level counts as
   * written. Lets the runtime skip work whose only use is a record nobody keeps.
   */
  enabled?(level: 'debug' | 'info' | 'warn' | 'error'): boolean;
}

/**
 * Why a task is dispatched: it was just created, or resumed after input (both by a write of
 * this process), or a recovery scan found it runnable with nobody holding it.
 */
export type DispatchReason = 'created' | 'resumed' | 'recovery';

/** Whose task is dispatched (fair share), and, for a new one, the caller's unfinished count. */
export interface DispatchHint {
  principal: string;
  /** The caller's unfinished tasks when this one was created, itself included (1 = only one). */
  position?: number;
  /** The task's concurrency permit, for an executor that runs it here: its claim asks for it. */
  permit?: PermitAsk;
}

/**
 * Runs tasks somewhere. The local executor runs them in this process; the BullMQ and
 * graphile-worker executors hand them to `taskrail worker` processes. `run` is the runtime's
 * own task runner.
 */
export interface Executor {
  /** Begin taking work. Called lazily, the first time a task-capable tool is used. */
  start(run: (taskId: string, permit?: PermitAsk) => Promise<void>): void;
  /**
   * A task became runnable. An executor whose store enqueues new and resumed tasks in the
   * writing transaction itself may ignore `created` and `resumed`; `recovery` always counts.
   * `hint` (when the runtime knows it) names the task's caller and its place among the caller's
   * unfinished tasks, so an executor can order waiting work fairly across principals.
   */
  dispatch(taskId: string, reason?: DispatchReason, hint?: DispatchHint): Promise<void>;
  /**
   * Optional: a recovery scan's finds in one go (an executor that can check and enqueue a batch
   * in a few commands). Without it each is `dispatch(id, 'recovery')`. A task without a revision
   * came from a store that does not report them.
   */
  dispatchRecovered?(tasks: readonly { id: string; revision?: number }[]): Promise<void>;
  /**
   * Optional: a task now waits durably (a retry's backoff, a sleep) and is runnable again in
   * `delayMs`. An executor that can keep a delayed run durably (a BullMQ delayed job) does so,
   * or says the store does it (graphile-worker: the wait's own write adds a job at `run_at`)
   * by doing nothing; without it the runtime keeps a timer here, and after a restart the
   * recovery scan finds the task once its wait is over.
   */
  dispatchAfter?(taskId: string, delayMs: number): Promise<void>;
  /**
   * Optional: these tasks were cancelled or deleted (expired) while they may have waited. An
   * executor that keeps delayed runs (`dispatchAfter`) removes theirs, so no job outlives its
   * task. Called once the store has the change.
   */
  forget?(taskIds: readonly string[]): Promise<void>;
  /** Resolves once the executor is connected and set up; serve waits for it before listening. */
  ready?(): Promise<void>;
  /**
   * Holds a slot for a task this process is about to create and run at once, so its lease can
   * be taken in the creating write. Undefined when no slot is free, or when work runs elsewhere.
   * `principal` is the caller the task runs for (fair share counts its slots).
   */
  reserve?(principal?: string): Reservation | undefined;
  /**
   * Optional: the handler of `taskId`, which this executor started, has returned; its run still
   * writes the outcome. An executor that counts handlers may give the slot to the next task now,
   * so that task's claim is committed with this one's outcome instead of one commit later.
   */
  handlerDone?(taskId: string): void;
  /** Optional: how many tasks each principal has waiting here for a slot, without the names. */
  queueDepths?(): number[];
  /** Stop taking work; wait for running tasks up to the grace period. */
  stop(graceMs: number): Promise<void>;
}

/** A slot held by `Executor.reserve`: used once by `run`, or given back by `release`. */
export interface Reservation {
  /** Runs `work` in the slot once the caller's turn has run (its reply written): `startAfterReply`. */
  run(taskId: string, work: () => Promise<void>): void;
  release(): void;
}

export interface RuntimeOptions {
  store: TaskStore;
  tools: ToolCatalog;
  /** `local` (default): run in this process. `none`: only record tasks (another process runs them). */
  executor?: 'local' | 'none' | Executor;
  /** Handlers running at once in this process (local executor). Default 16. */
  concurrency?: number;
  /** How long a running task's lease lasts without a heartbeat. Default 15 s. */
  leaseMs?: number;
  defaultTtlMs?: number;
  maxTtlMs?: number;
  allowUnlimitedTtl?: boolean;
  defaultPollIntervalMs?: number;
  /** Refuse arguments / results whose JSON is larger. Default 1 MiB / 4 MiB. */
  maxArgumentsBytes?: number;
  maxResultBytes?: number;
  /**
   * A create that would give one principal more than this many unfinished (`working` or
   * `input_required`) tasks is refused (`QueueFullError`). Default 10,000.
   */
  maxQueuedPerPrincipal?: number;
  /**
   * A result whose text blocks hold more characters is kept whole beside the task (read in
   * pages as `taskrail://tasks/ID/result`); what the task hands out is shortened to fit: a line
   * saying how to read the rest, the first part, and a `resource_link`. Default 40,000.
   */
  maxResultChars?: number;
  /** The longest result text kept (a longer one fails the task). Default 64 Mi characters. */
  maxResultTextChars?: number;
  /** The most of one task's `ctx.output` kept; the oldest part gives way. Default 1,000,000. */
  maxOutputChars?: number;
  /** Attempts before a re-run task fails "interrupted". Default 3. */
  maxAttempts?: number;
  clock?: Clock;
  logger?: Logger;
  /** Told of time-outs, retries and durable waits as they happen here (for metrics). */
  observer?: RunObserver;
}

/** Why another attempt of a task runs. */
export type RetryReason = 'error' | 'timeout' | 'interrupted';

/**
 * What the runtime reports of the run policy as it applies it, in the process that runs the
 * attempt. Every method is optional; one that throws is ignored.
 */
export interface RunObserver {
  /** An attempt of `tool` reached its `timeoutMs`. */
  attemptTimedOut?(tool: string): void;
  /** Another attempt of `tool` follows: after a thrown error, a time-out, or an interruption. */
  retrying?(tool: string, reason: RetryReason): void;
  /** A task of `tool` waits durably: a retry's backoff, or `ctx.sleep`. */
  waiting?(tool: string, kind: 'backoff' | 'sleep'): void;
  /** A task of `tool` starts waiting for a concurrency permit (once per wait). */
  permitWaiting?(tool: string): void;
}

export interface CreateTaskInput {
  tool: string;
  arguments: JsonObject;
  principal: string;
  ttlMs?: number | null;
  pollIntervalMs?: number;
  wire?: TaskWire;
  meta?: JsonObject;
  /**
   * Names this creation so a retry (after a lost reply) gets the same task instead of a
   * second one. Scoped to the principal; free again once the task expires.
   */
  idempotencyKey?: string;
}

/** A synchronous (task-less) run: the tool's result, or the questions it needs answered first. */
export type InlineOutcome =
  | { kind: 'result'; result: ToolResult }
  | { kind: 'input_required'; inputRequests: Record<string, InputRequest> };

export interface InlineRunInput {
  tool: string;
  arguments: JsonObject;
  principal: string;
  /** Answers from an MRTR retry, keyed like the questions. */
  inputResponses?: Record<string, JsonObject>;
  signal?: AbortSignal;
}

export type { TaskRecord };
