import { performance } from 'node:perf_hooks';
import type { TaskEvents } from '../store/events.js';
import type { CreateOutcome, PermitAsk, TaskStore } from '../store/port.js';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { RPC, RpcError, isStoreUnavailable } from '../task/errors.js';
import { newTaskId } from '../task/ids.js';
import { newTaskRecord, type JsonObject, type TaskRecord } from '../task/record.js';
import { metaWithMaxAttempts } from '../task/run-meta.js';
import { isTerminal } from '../task/status.js';
import { systemClock, type Clock } from '../task/time.js';
import * as t from '../task/transitions.js';
import type {
  CreateTaskInput,
  DispatchHint,
  DispatchReason,
  Executor,
  InlineOutcome,
  InlineRunInput,
  Logger,
  RuntimeOptions,
  ToolCatalog,
} from './api.js';
import { stopReasons } from './abort-reasons.js';
import type { RunAbort } from './run-abort.js';
import { assertAnswersFit, assertNotWithdrawn } from './answers.js';
import { assertIdempotencyKey, assertSameCall } from './idempotency.js';
import { CONCURRENCY_KEY_META, concurrencyKeyOf, permitAskOf } from './concurrency.js';
import { runInline } from './inline.js';
import { newOwnerId } from './owner.js';
import { runnableTasks, takeOverFromGone } from './takeover.js';
import { assertArgumentsSize, resolveTtl, type TtlPolicy } from './limits.js';
import { LocalExecutor } from './local-executor.js';
import * as queueCap from './queue-cap.js';
import { maxAttemptsOf } from './run-policy.js';
import { stderrLogger } from './logger.js';
import { StoreHealth } from './store-health.js';
import {
  handBack,
  runClaimedTask,
  runTask,
  startLeasedTask,
  type RunnerSettings,
} from './task-runner.js';
import { traced } from './tracing.js';
import { logTransitions } from './transition-log.js';
import { waitForSettled, waitForTerminal, type SettleOptions } from './wait.js';
import { updateTask } from './writes.js';

const DEFAULTS = {
  concurrency: 16,
  leaseMs: 15_000,
  defaultTtlMs: 60 * 60 * 1000,
  maxTtlMs: 7 * 24 * 60 * 60 * 1000,
  defaultPollIntervalMs: 1000,
  maxArgumentsBytes: 1024 * 1024,
  maxResultBytes: 4 * 1024 * 1024,
  maxResultChars: 40_000,
  maxResultTextChars: 64 * 1024 * 1024,
  maxOutputChars: 1_000_000,
  maxAttempts: 3,
  sweepIntervalMs: 60_000,
  sweepBatch: 500,
  /** Wall time one sweep batch may hold the thread; the batch size adapts to stay near it. */
  sweepBatchBudgetMs: 8,
};

/**
 * A wake-up timer fires this much after the wait's end: timers and the store's clock may
 * disagree by a little, and a claim a moment early is refused (the task would then wait for the
 * next recovery scan).
 */
const WAKE_MARGIN_MS = 5;

/**
 * The engine: creates tasks durably, runs them through an executor, parks and resumes them on
 * input, cancels them, recovers them after crashes and sweeps them when they expire. Nothing
 * (no timer, no executor, no listener) starts until `start()` — which `createTask` calls — so
 * an idle runtime costs nothing.
 */
export class TaskRuntime {
  readonly store: TaskStore;
  readonly events: TaskEvents;
  readonly #tools: ToolCatalog;
  readonly #executor: Executor | undefined;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #ttl: TtlPolicy;
  readonly #settings: RunnerSettings;
  readonly #options: Required<Pick<RuntimeOptions, 'defaultPollIntervalMs' | 'maxArgumentsBytes'>>;
  readonly #maxQueued: number;
  readonly #running = new Map<string, RunAbort>();
  readonly #leases = new Map<string, string>();
  readonly #health: StoreHealth;
  #timers: NodeJS.Timeout[] = [];
  readonly #wakeTimers = new Map<string, NodeJS.Timeout>();
  #unsubscribe: (() => void) | undefined;
  #started = false;
  /** The store hands due waits over itself (see #watchWaits): no timer per wait here. */
  #storeWakesWaits = false;

  constructor(options: RuntimeOptions) {
    this.store = options.store;
    this.events = options.store.events;
    this.#tools = options.tools;
    this.#clock = options.clock ?? systemClock;
    this.#logger = options.logger ?? stderrLogger('warn');
    this.#executor = pickExecutor(options);
    this.#health = new StoreHealth(this.#logger);
    this.#ttl = {
      defaultTtlMs: options.defaultTtlMs ?? DEFAULTS.defaultTtlMs,
      maxTtlMs: options.maxTtlMs ?? DEFAULTS.maxTtlMs,
      allowUnlimitedTtl: options.allowUnlimitedTtl ?? false,
    };
    this.#options = {
      defaultPollIntervalMs: options.defaultPollIntervalMs ?? DEFAULTS.defaultPollIntervalMs,
      maxArgumentsBytes: options.maxArgumentsBytes ?? DEFAULTS.maxArgumentsBytes,
    };
    const maxQueued = options.maxQueuedPerPrincipal ?? queueCap.DEFAULT_MAX_QUEUED_PER_PRINCIPAL;
    this.#maxQueued = queueCap.checkQueueCap(maxQueued);
    const leaseMs = options.leaseMs ?? DEFAULTS.leaseMs;
    this.#settings = {
      store: options.store,
      tools: options.tools,
      owner: newOwnerId(),
      leaseMs,
      heartbeatMs: Math.max(50, Math.min(1000, Math.floor(leaseMs / 3))),
      maxAttempts: options.maxAttempts ?? DEFAULTS.maxAttempts,
      maxResultBytes: options.maxResultBytes ?? DEFAULTS.maxResultBytes,
      maxResultChars: options.maxResultChars ?? DEFAULTS.maxResultChars,
      maxResultTextChars: options.maxResultTextChars ?? DEFAULTS.maxResultTextChars,
      maxOutputChars: options.maxOutputChars ?? DEFAULTS.maxOutputChars,
      clock: this.#clock,
      logger: this.#logger,
      health: this.#health,
      writeBudgetMs: Math.max(60_000, 4 * leaseMs),
      running: this.#running,
      leases: this.#leases,
      handlerDone: (taskId) => this.#executor?.handlerDone?.(taskId),
      wake: (taskId, delayMs) => this.#wakeLater(taskId, delayMs),
      runSoon: (taskId, permit) => this.#runSoon(taskId, permit),
      observer: options.observer,
    };
  }

  /** Tasks waiting for a slot of this process, one number per principal (fair share's queue). */
  queueDepths(): number[] {
    return this.#executor?.queueDepths?.() ?? [];
  }

  get started(): boolean {
    return this.#started;
  }

  /** Starts the executor, crash recovery and the TTL sweeper. Idempotent. */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    // Only the tasks running here: another process's writes to other tasks cost no read-back.
    const offAbort = this.events.on(
      'task:transition',
      ({ task, to }) => {
        if (isTerminal(to)) this.#running.get(task.id)?.abort(stopReasons.terminal(to));
      },
      { only: (id) => this.#running.has(id) },
    );
    const offLog = logTransitions(this.events, this.#logger);
    const offWaits = this.#watchWaits();
    this.#unsubscribe = () => {
      offAbort();
      offLog();
      offWaits();
    };
    if (this.#executor !== undefined) {
      this.#executor.start((taskId, permit) =>
        traced('taskrail.task.execute', { 'taskrail.task_id': taskId }, () =>
          runTask(this.#settings, taskId, permit),
        ),
      );
      this.#every('recovery scan', this.#settings.leaseMs, () => this.recoverNow());
      this.#background('recovery scan', this.recoverNow());
    }
    this.#every('expiry sweep', DEFAULTS.sweepIntervalMs, () => this.sweepNow());
  }

  /**
   * Stops taking work and gives running handlers `graceMs` to finish. A handler still running
   * then is aborted and its task handed back as interrupted: the next claim counts the attempt,
   * and a `retry: false` tool fails rather than running twice. Each such task is logged.
   */
  async stop(graceMs = 10_000): Promise<void> {
    if (!this.#started) return;
    this.#started = false;
    for (const timer of this.#timers.splice(0)) clearInterval(timer);
    for (const timer of this.#wakeTimers.values()) clearTimeout(timer);
    this.#wakeTimers.clear();
    this.#unsubscribe?.();
    // A stop that waits says what for and how long at most, instead of going quiet.
    if (this.#leases.size > 0) this.#logger.info(waitNotice(this.#leases.size, graceMs));
    await this.#executor?.stop(graceMs);
    const abandoned = [...this.#leases.entries()];
    for (const controller of this.#running.values()) controller.abort(stopReasons.shutdown());
    for (const [taskId, token] of abandoned) {
      this.#logger.warn('graceful stop: task still running after the grace period, handed back', {
        taskId,
        graceMs,
      });
      await handBack(this.#settings, taskId, token, true);
    }
  }

  async createTask(input: CreateTaskInput): Promise<TaskRecord> {
    const tool = this.#tools.get(input.tool);
    if (tool === undefined) throw new RpcError(RPC.INVALID_PARAMS, `Unknown tool: ${input.tool}`);
    if (tool.task.mode === 'forbidden') {
      throw new RpcError(RPC.METHOD_NOT_FOUND, `Tool '${input.tool}' does not run as a task`);
    }
    assertArgumentsSize(input.arguments, this.#options.maxArgumentsBytes);
    assertIdempotencyKey(input.idempotencyKey);
    const concurrencyKey = concurrencyKeyOf(tool, input.arguments, input.principal);
    const meta =
      concurrencyKey === undefined
        ? input.meta
        : { ...input.meta, [CONCURRENCY_KEY_META]: concurrencyKey };
    this.start();
    const record = newTaskRecord(
      {
        id: newTaskId(),
        principal: input.principal,
        tool: input.tool,
        arguments: input.arguments,
        ttlMs: resolveTtl(input.ttlMs, tool.task, this.#ttl),
        pollIntervalMs:
          input.pollIntervalMs ?? tool.task.pollIntervalMs ?? this.#options.defaultPollIntervalMs,
        ...(input.wire === undefined ? {} : { wire: input.wire }),
        meta: metaWithMaxAttempts(meta ?? {}, maxAttemptsOf(tool.task, this.#settings.maxAttempts)),
        ...(input.idempotencyKey === undefined ? {} : { idempotencyKey: input.idempotencyKey }),
      },
      this.#clock(),
    );
    return this.#createAndStart(record);
  }

  /**
   * With a free local slot the task's lease is taken in the creating write and the run starts
   * right after the reply; otherwise the executor is told, and claims it when it can.
   */
  async #createAndStart(record: TaskRecord): Promise<TaskRecord> {
    const slot = this.#executor?.reserve?.(record.principal);
    // A keyed task asks for its permit in the write that leases it (or in its claim).
    const permit = permitAskOf(this.#tools.get(record.tool), record);
    const lease = { owner: this.#settings.owner, leaseMs: this.#settings.leaseMs, permit };
    const maxUnfinished = this.#maxQueued;
    let outcome: CreateOutcome;
    const sentAt = performance.now();
    try {
      const options = slot === undefined ? { maxUnfinished } : { lease, maxUnfinished };
      outcome = await this.store.create(record, options);
    } catch (error) {
      slot?.release();
      throw queueCap.asQueueFull(error, maxUnfinished);
    }
    const { task, created } = outcome;
    if (slot !== undefined && outcome.lease !== undefined) {
      const run = startLeasedTask(this.#settings, task, outcome.lease, sentAt, permit);
      slot.run(task.id, () =>
        traced('taskrail.task.execute', { 'taskrail.task_id': task.id }, run),
      );
      return task;
    }
    slot?.release();
    if (!created) assertSameCall(task, record);
    else
      await this.#dispatch(
        task.id,
        'created',
        queueCap.hintOf(task.principal, outcome.position, permit),
      );
    return task;
  }

  /** The task if it exists, has not expired and belongs to `principal`; else undefined. */
  async getTask(id: string, principal: string): Promise<TaskRecord | undefined> {
    const task = await this.store.get(id);
    return task !== undefined && task.principal === principal ? task : undefined;
  }

  /**
   * Records answers to pending input keys (others are ignored) and resumes the task when done.
   * Every `tasks/update` path reaches this: an answer that does not fit its request is refused
   * with -32602 naming the key, before anything is stored, and the task keeps waiting.
   */
  async answerInput(
    id: string,
    principal: string,
    responses: Record<string, JsonObject>,
  ): Promise<TaskRecord | undefined> {
    const existing = await this.getTask(id, principal);
    if (existing === undefined) return undefined;
    assertNotWithdrawn(existing, responses);
    let resumed = false;
    const task = await updateTask(this.store, id, (current) => {
      assertNotWithdrawn(current, responses);
      assertAnswersFit(current, responses);
      const outcome = t.answerInput(current, responses, this.#clock());
      resumed = outcome.resumed;
      return outcome.task;
    });
    if (resumed && task !== undefined) {
      await this.#dispatch(task.id, 'resumed', { principal: task.principal });
    }
    return task;
  }

  /** Moves a live task to `cancelled` and aborts its handler. A terminal task is returned as is. */
  async cancelTask(
    id: string,
    principal: string,
    message?: string,
  ): Promise<TaskRecord | undefined> {
    if ((await this.getTask(id, principal)) === undefined) return undefined;
    const task = await updateTask(this.store, id, (current) =>
      t.cancel(current, this.#clock(), message),
    );
    this.#running.get(id)?.abort(stopReasons.cancelled());
    return task;
  }

  /** Runs a tool without a task (the client did not opt in). MRTR questions come back unanswered. */
  runInline(input: InlineRunInput): Promise<InlineOutcome> {
    const tool = this.#tools.get(input.tool);
    if (tool === undefined) throw new RpcError(RPC.INVALID_PARAMS, `Unknown tool: ${input.tool}`);
    assertArgumentsSize(input.arguments, this.#options.maxArgumentsBytes);
    return runInline(tool, input);
  }

  /**
   * Claims a runnable task and runs it in this process, in a free executor slot: for a handler
   * whose live state is here (the proxy's open upstream call) when another process got the
   * task's dispatch and handed it back. False when the task is not runnable, someone holds it,
   * or no slot is free (the caller may try again).
   */
  async runHere(taskId: string, permit?: PermitAsk): Promise<boolean> {
    if (this.#executor === undefined || !this.#started || this.#running.has(taskId)) return false;
    const slot = this.#executor.reserve?.();
    if (slot === undefined) return false;
    const { owner, leaseMs } = this.#settings;
    const sentAt = performance.now();
    const options = permit === undefined ? { load: true } : { load: true, permit };
    const lease = await this.store.claim(taskId, owner, leaseMs, options).catch(() => undefined);
    if (lease === undefined) {
      slot.release();
      return false;
    }
    slot.run(taskId, () =>
      traced('taskrail.task.execute', { 'taskrail.task_id': taskId }, () =>
        runClaimedTask(this.#settings, taskId, lease, sentAt, permit),
      ),
    );
    return true;
  }

  /** Resolves once the task is terminal (or gone); used by the blocking `tasks/result`. */
  async waitForTerminal(
    id: string,
    principal: string,
    signal?: AbortSignal,
  ): Promise<TaskRecord | undefined> {
    return waitForTerminal(this, id, principal, signal);
  }

  /** Resolves when the task ends, asks for input, or `timeoutMs` passed: the latest version. */
  async waitForSettled(
    id: string,
    principal: string,
    options: SettleOptions,
  ): Promise<TaskRecord | undefined> {
    return waitForSettled(this, id, principal, options);
  }

  /**
   * Dispatches every working task nobody holds (new, resumed, or whose holder's lease ran out),
   * and takes over at once those whose holder was a process on this machine that is gone.
   */
  async recoverNow(limit = 500): Promise<number> {
    if (this.#executor === undefined) return 0;
    const found = await runnableTasks(this.store, limit);
    const idle = found.filter((task) => !this.#running.has(task.id));
    if (this.#executor.dispatchRecovered !== undefined && idle.length > 0) {
      this.start();
      await this.#executor.dispatchRecovered(idle);
    } else {
      for (const { id } of idle) await this.#dispatch(id, 'recovery');
    }
    const taken = await takeOverFromGone(this.#settings, this.#executor, this.#logger, limit);
    return found.length + taken;
  }

  /**
   * Deletes expired tasks in batches, yielding to the event loop between them: a synchronous
   * store (SQLite) would otherwise hold the thread for the whole sweep. The batch size follows
   * the time each batch took, so a slow disk or a busy machine gets smaller batches rather than
   * longer stalls.
   */
  async sweepNow(): Promise<number> {
    let total = 0;
    let batch = DEFAULTS.sweepBatch;
    for (;;) {
      const started = performance.now();
      const deleted = await this.store.sweepExpired(batch);
      total += deleted.length;
      if (deleted.length < batch) return total;
      batch = nextSweepBatch(batch, performance.now() - started);
      await yieldToLoop();
    }
  }

  /**
   * A task waits durably until `delayMs` from now (on the store's clock). The executor keeps the
   * delayed run if it can; else a timer here dispatches it then (the store refuses an early
   * claim, and after a restart the recovery scan finds it once due).
   */
  async #wakeLater(taskId: string, delayMs: number): Promise<void> {
    const executor = this.#executor;
    if (executor === undefined || !this.#started || this.#storeWakesWaits) return;
    if (executor.dispatchAfter !== undefined) {
      // Trouble here is not the wait's failure: the recovery scan runs the task once it is due.
      await executor.dispatchAfter(taskId, delayMs).catch((error: unknown) => {
        this.#logger.warn('could not queue a wake-up; the recovery scan will run the task', {
          taskId,
          error: String(error),
        });
      });
      return;
    }
    clearTimeout(this.#wakeTimers.get(taskId));
    const timer = setTimeout(() => {
      this.#wakeTimers.delete(taskId);
      this.#background('wake a waiting task', this.#dispatch(taskId, 'recovery'));
    }, delayMs + WAKE_MARGIN_MS);
    timer.unref();
    this.#wakeTimers.set(taskId, timer);
  }

  /**
   * A store that wakes durable waits itself (SQLite) hands each due wait to the executor at its
   * time, also those set before this process started, which the recovery scan would find only
   * up to a lease later. An executor with delayed jobs (BullMQ, graphile-worker) keeps its own.
   */
  #watchWaits(): () => void {
    const executor = this.#executor;
    if (executor === undefined || executor.dispatchAfter !== undefined) return () => undefined;
    const stop = this.store.onWaitsDue?.((taskId) => {
      if (this.#running.has(taskId)) return;
      this.#background('wake a waiting task', this.#dispatch(taskId, 'recovery'));
    });
    if (stop === undefined) return () => undefined;
    this.#storeWakesWaits = true;
    return () => {
      this.#storeWakesWaits = false;
      stop();
    };
  }

  /**
   * A permit waiter that fits now: this process runs it at once in a free slot (its claim asks
   * for the permit), else hands it to the executor, which may run it anywhere.
   */
  #runSoon(taskId: string, permit?: PermitAsk): void {
    if (this.#running.has(taskId) || !this.#started) return;
    const hint = permit === undefined ? undefined : { principal: '', permit };
    const wake = async () => {
      if (!(await this.runHere(taskId, permit))) await this.#dispatch(taskId, 'recovery', hint);
    };
    this.#background('wake a permit waiter', wake());
  }

  async #dispatch(taskId: string, reason: DispatchReason, hint?: DispatchHint): Promise<void> {
    if (this.#executor === undefined) return;
    this.start();
    await this.#executor.dispatch(taskId, reason, hint);
  }

  #every(name: string, intervalMs: number, work: () => Promise<unknown>): void {
    const timer = setInterval(() => this.#background(name, work()), intervalMs);
    timer.unref();
    this.#timers.push(timer);
  }

  /**
   * Timer-driven work never rejects unhandled: store trouble goes to `health`, once. Its
   * success says nothing of recovery (a scan only reads, and SQLite reads pass a write lock).
   */
  #background(name: string, work: Promise<unknown>): void {
    work.then(
      () => undefined,
      (error: unknown) => {
        if (isStoreUnavailable(error)) this.#health.failed(name, error);
        else this.#logger.warn(`${name} failed`, { error: String(error) });
      },
    );
  }
}

function pickExecutor(options: RuntimeOptions): Executor | undefined {
  if (options.executor === 'none') return undefined;
  if (options.executor === undefined || options.executor === 'local') {
    return new LocalExecutor({ concurrency: options.concurrency ?? DEFAULTS.concurrency });
  }
  return options.executor;
}

/** Scales a sweep batch toward the time budget, within bounds, changing at most 2× a step. */
export function nextSweepBatch(batch: number, tookMs: number): number {
  const scale = DEFAULTS.sweepBatchBudgetMs / Math.max(tookMs, 0.1);
  const next = Math.round(batch * Math.min(2, Math.max(0.5, scale)));
  return Math.min(DEFAULTS.sweepBatch * 4, Math.max(16, next));
}

function waitNotice(running: number, graceMs: number): string {
  const tasks = running === 1 ? '1 running task' : `${running} running tasks`;
  return `graceful stop: waiting up to ${graceMs / 1000} s for ${tasks} to finish; any still running then is handed back`;
}
