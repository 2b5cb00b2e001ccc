import { performance } from 'node:perf_hooks';
import type { TaskEvents } from '../store/events.js';
import type { PermitAsk, TaskStore } from '../store/port.js';
import { RPC, RpcError } from '../task/errors.js';
import type { JsonObject, TaskRecord } from '../task/record.js';
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
} from './api.js';
import { stopReasons } from './abort-reasons.js';
import type { RunAbort } from './run-abort.js';
import { assertAnswersFit, assertNotWithdrawn } from './answers.js';
import { BackgroundWork } from './background-work.js';
import { DurableWaitWakeUps } from './durable-wait-wake-ups.js';
import { SWEEP_INTERVAL_MS, sweepExpired } from './expiry-sweep.js';
import { runInline } from './inline.js';
import { outageGraceMs } from './heartbeat.js';
import { newOwnerId } from './owner.js';
import { runnableTasks, takeOverFromGone } from './takeover.js';
import { assertArgumentsSize } from './limits.js';
import { LocalExecutor } from './local-executor.js';
import * as queueCap from './queue-cap.js';
import { stderrLogger } from './logger.js';
import { StoreHealth } from './store-health.js';
import { createTask, type CreationContext } from './task-creation.js';
import { handBack, runClaimedTask, runTask, type RunnerSettings } from './task-runner.js';
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
};

/**
 * The engine: creates tasks durably, runs them through an executor, parks and resumes them on
 * input, cancels them, recovers them after crashes and sweeps them when they expire. Nothing
 * (no timer, no executor, no listener) starts until `start()` — which `createTask` calls — so
 * an idle runtime costs nothing.
 */
export class TaskRuntime {
  readonly store: TaskStore;
  readonly events: TaskEvents;
  readonly #executor: Executor | undefined;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #settings: RunnerSettings;
  readonly #creation: CreationContext;
  readonly #running = new Map<string, RunAbort>();
  readonly #leases = new Map<string, string>();
  readonly #health: StoreHealth;
  readonly #background: BackgroundWork;
  readonly #wakeUps: DurableWaitWakeUps;
  #unsubscribe: (() => void) | undefined;
  #started = false;
  #lookAgain: NodeJS.Timeout | undefined;

  constructor(options: RuntimeOptions) {
    this.store = options.store;
    this.events = options.store.events;
    this.#clock = options.clock ?? systemClock;
    this.#logger = options.logger ?? stderrLogger('warn');
    this.#executor = pickExecutor(options);
    this.#health = new StoreHealth(this.#logger);
    this.#background = new BackgroundWork(this.#logger, this.#health);
    const maxQueued = options.maxQueuedPerPrincipal ?? queueCap.DEFAULT_MAX_QUEUED_PER_PRINCIPAL;
    const maxQueuedPerPrincipal = queueCap.checkQueueCap(maxQueued);
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
      wake: (taskId, delayMs) => this.#wakeUps.later(taskId, delayMs),
      runSoon: (taskId, permit) => this.#runSoon(taskId, permit),
      spared: () => this.#lookAgainAfterOutage(),
      heldBack: new Set(),
      observer: options.observer,
    };
    this.#creation = {
      settings: this.#settings,
      executor: this.#executor,
      ttl: {
        defaultTtlMs: options.defaultTtlMs ?? DEFAULTS.defaultTtlMs,
        maxTtlMs: options.maxTtlMs ?? DEFAULTS.maxTtlMs,
        allowUnlimitedTtl: options.allowUnlimitedTtl ?? false,
      },
      defaultPollIntervalMs: options.defaultPollIntervalMs ?? DEFAULTS.defaultPollIntervalMs,
      maxArgumentsBytes: options.maxArgumentsBytes ?? DEFAULTS.maxArgumentsBytes,
      maxQueuedPerPrincipal,
      start: () => this.start(),
      dispatch: (taskId, reason, hint) => this.#dispatch(taskId, reason, hint),
    };
    this.#wakeUps = new DurableWaitWakeUps({
      store: options.store,
      executor: this.#executor,
      logger: this.#logger,
      running: this.#running,
      background: this.#background,
      isStarted: () => this.#started,
      dispatch: (taskId) => this.#dispatch(taskId, 'recovery'),
    });
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
    const offWaits = this.#wakeUps.watch();
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
      this.#background.every('recovery scan', this.#settings.leaseMs, () => this.recoverNow());
      this.#background.run('recovery scan', this.recoverNow());
    }
    this.#background.every('expiry sweep', SWEEP_INTERVAL_MS, () => this.sweepNow());
  }

  /**
   * Stops taking work and gives running handlers `graceMs` to finish. A handler still running
   * then is aborted and its task handed back as interrupted: the next claim counts the attempt,
   * and a `retry: false` tool fails rather than running twice. Each such task is logged.
   */
  async stop(graceMs = 10_000): Promise<void> {
    if (!this.#started) return;
    this.#started = false;
    this.#background.stopTimers();
    clearTimeout(this.#lookAgain);
    this.#wakeUps.clearTimers();
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

  createTask(input: CreateTaskInput): Promise<TaskRecord> {
    return createTask(this.#creation, input);
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
    const tool = this.#settings.tools.get(input.tool);
    if (tool === undefined) throw new RpcError(RPC.INVALID_PARAMS, `Unknown tool: ${input.tool}`);
    assertArgumentsSize(input.arguments, this.#creation.maxArgumentsBytes);
    return runInline(tool, input);
  }

  /**
   * Claims a runnable task and runs it in this process, in a free executor slot: for a handler
   * whose live state is here (the proxy's open upstream call) when another process got the
   * task's dispatch and handed it back. False when the task is not runnable, someone holds it,
   * or no slot is free (the caller may try again).
   */
  async runHere(taskId: string, permit?: PermitAsk): Promise<boolean> {
    if (this.#executor === undefined || !this.#started || this.#inFlight(taskId)) return false;
    const slot = this.#executor.reserve?.();
    if (slot === undefined) return false;
    const { owner, leaseMs } = this.#settings;
    const sentAt = performance.now();
    const spareExpired = this.#health.recentlyDown(outageGraceMs(this.#settings.heartbeatMs));
    const options = { load: true, ...(permit === undefined ? {} : { permit }), spareExpired };
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
    // A task this process still runs or finishes is never claimed again here, whatever its
    // lease says: after an outage it may look expired while its outcome is being written.
    const idle = found.filter((task) => !this.#inFlight(task.id));
    if (this.#executor.dispatchRecovered !== undefined && idle.length > 0) {
      this.start();
      await this.#executor.dispatchRecovered(idle);
    } else {
      for (const { id } of idle) await this.#dispatch(id, 'recovery');
    }
    const taken = await takeOverFromGone(this.#settings, this.#executor, this.#logger, limit);
    return found.length + taken;
  }

  /** Deletes expired tasks (in batches that yield to the event loop); how many. */
  sweepNow(): Promise<number> {
    return sweepExpired(this.store);
  }

  /**
   * A permit waiter that fits now: this process runs it at once in a free slot (its claim asks
   * for the permit), else hands it to the executor, which may run it anywhere.
   */
  #runSoon(taskId: string, permit?: PermitAsk): void {
    if (this.#inFlight(taskId) || !this.#started) return;
    const hint = permit === undefined ? undefined : { principal: '', permit };
    const wake = async () => {
      if (!(await this.runHere(taskId, permit))) await this.#dispatch(taskId, 'recovery', hint);
    };
    this.#background.run('wake a permit waiter', wake());
  }

  /** Running here, or its outcome is still being written here (its lease is this process's). */
  #inFlight(taskId: string): boolean {
    return this.#running.has(taskId) || this.#leases.has(taskId);
  }

  /**
   * A claim spared an expired lease right after an outage: one more recovery scan once the
   * holders had their renewal interval (a lease nobody renewed by then is taken).
   */
  #lookAgainAfterOutage(): void {
    if (this.#lookAgain !== undefined || !this.#started) return;
    this.#lookAgain = setTimeout(() => {
      this.#lookAgain = undefined;
      if (this.#started) this.#background.run('recovery scan', this.recoverNow());
    }, outageGraceMs(this.#settings.heartbeatMs));
    this.#lookAgain.unref();
  }

  async #dispatch(taskId: string, reason: DispatchReason, hint?: DispatchHint): Promise<void> {
    if (this.#executor === undefined) return;
    this.start();
    await this.#executor.dispatch(taskId, reason, hint);
  }
}

function pickExecutor(options: RuntimeOptions): Executor | undefined {
  if (options.executor === 'none') return undefined;
  if (options.executor === undefined || options.executor === 'local') {
    return new LocalExecutor({ concurrency: options.concurrency ?? DEFAULTS.concurrency });
  }
  return options.executor;
}

function waitNotice(running: number, graceMs: number): string {
  const tasks = running === 1 ? '1 running task' : `${running} running tasks`;
  return `graceful stop: waiting up to ${graceMs / 1000} s for ${tasks} to finish; any still running then is handed back`;
}
