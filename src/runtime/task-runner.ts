import type { LeaseGrant, TaskStore } from '../store/port.js';
import {
  RPC,
  RpcError,
  isRpcError,
  rpcErrorObject,
  type JsonRpcErrorObject,
} from '../task/errors.js';
import type { InputRequest, JsonObject, TaskRecord } from '../task/record.js';
import { isTerminal } from '../task/status.js';
import * as t from '../task/transitions.js';
import type { Clock } from '../task/time.js';
import type { Logger, ToolCatalog } from './api.js';
import { RunContext, type ContextBackend } from './context.js';
import { jsonSize, resultTooLarge } from './limits.js';
import { isParkSignal } from './park.js';
import type { RunnableTool, ToolResult } from './tool.js';
import { updateTask } from './writes.js';

export interface RunnerSettings {
  store: TaskStore;
  tools: ToolCatalog;
  owner: string;
  leaseMs: number;
  heartbeatMs: number;
  maxAttempts: number;
  maxResultBytes: number;
  clock: Clock;
  logger: Logger;
  /** Where running tasks register their abort controller, so a cancellation can reach them. */
  running: Map<string, AbortController>;
}

/**
 * Runs one task to its next resting point (terminal, or parked for input) under a lease. Safe to
 * call for any id at any time: if the task is not runnable or someone else holds it, it returns.
 */
export async function runTask(settings: RunnerSettings, taskId: string): Promise<void> {
  const lease = await settings.store.claim(taskId, settings.owner, settings.leaseMs);
  if (lease !== undefined) await runClaimedTask(settings, taskId, lease);
}

/** Runs a task whose lease this runner already holds (claimed, or taken over from the dead). */
export function runClaimedTask(
  settings: RunnerSettings,
  taskId: string,
  lease: LeaseGrant,
): Promise<void> {
  return runUnderLease(settings, taskId, lease, new AbortController(), async () => {
    const task = await prepare(settings, taskId, lease);
    return task === undefined ? undefined : { task, steps: await settings.store.loadSteps(taskId) };
  });
}

/**
 * For a task its creator leased in the creating write: registers it as running at once (so a
 * cancellation before it starts still reaches it) and returns the run. The task is fresh, so
 * there is nothing to re-read and no finished steps to load.
 */
export function startLeasedTask(
  settings: RunnerSettings,
  task: TaskRecord,
  lease: LeaseGrant,
): () => Promise<void> {
  const controller = new AbortController();
  settings.running.set(task.id, controller);
  return () =>
    runUnderLease(settings, task.id, lease, controller, async () => ({ task, steps: {} }));
}

interface Loaded {
  task: TaskRecord;
  steps: Record<string, unknown>;
}

async function runUnderLease(
  settings: RunnerSettings,
  taskId: string,
  lease: LeaseGrant,
  controller: AbortController,
  load: () => Promise<Loaded | undefined>,
): Promise<void> {
  settings.running.set(taskId, controller);
  const stopHeartbeat = startHeartbeat(settings, taskId, lease, controller);
  let rested = false;
  try {
    const loaded = controller.signal.aborted ? undefined : await load();
    if (loaded !== undefined) rested = await execute(settings, loaded, controller.signal);
  } finally {
    stopHeartbeat();
    settings.running.delete(taskId);
    // A write that took the task out of `working` already dropped the lease in the same
    // transaction; releasing it again would cost a write for nothing.
    if (!rested) await settings.store.releaseLease(taskId, lease.token).catch(() => undefined);
  }
}

/** Loads the task and decides whether it may run: a re-run after a crash is counted or refused. */
async function prepare(
  settings: RunnerSettings,
  taskId: string,
  lease: LeaseGrant,
): Promise<TaskRecord | undefined> {
  const task = await settings.store.get(taskId);
  if (task === undefined || task.status !== 'working') return undefined;
  const tool = settings.tools.get(task.tool);
  if (tool === undefined) {
    await finish(settings, taskId, {
      error: { code: RPC.INTERNAL_ERROR, message: `tool '${task.tool}' is not registered here` },
    });
    return undefined;
  }
  if (!lease.interrupted) return task;
  const refusal = interruptionRefusal(tool, task, settings.maxAttempts);
  if (refusal !== undefined) {
    await finish(settings, taskId, { error: { code: RPC.INTERNAL_ERROR, message: refusal } });
    return undefined;
  }
  settings.logger.warn('re-running an interrupted task', { taskId, attempt: task.attempt + 1 });
  return updateTask(settings.store, taskId, (current) =>
    current.status === 'working' ? t.retry(current, settings.clock()) : undefined,
  );
}

function interruptionRefusal(
  tool: RunnableTool,
  task: TaskRecord,
  defaultMaxAttempts: number,
): string | undefined {
  const retry = tool.task.retry ?? true;
  if (retry === false) {
    return `Task interrupted: the process running it stopped, and tool '${task.tool}' is not safe to re-run.`;
  }
  const maxAttempts = retry === true ? defaultMaxAttempts : retry.maxAttempts;
  if (task.attempt >= maxAttempts) {
    return `Task interrupted ${task.attempt} time(s); giving up after ${maxAttempts} attempts.`;
  }
  return undefined;
}

/** Runs the handler; resolves true when the task came to rest (terminal or parked). */
async function execute(
  settings: RunnerSettings,
  loaded: Loaded,
  signal: AbortSignal,
): Promise<boolean> {
  const tool = settings.tools.get(loaded.task.tool) as RunnableTool;
  const latest = { task: loaded.task };
  const context = new RunContext(durableBackend(settings, latest, loaded.steps, signal));
  const { id } = loaded.task;
  // Once the handler is done there is nothing left to abort: the task's own terminal write
  // must not fire its signal.
  const handlerDone = () => {
    context.dispose();
    if (settings.running.get(id)?.signal === signal) settings.running.delete(id);
  };
  try {
    const result = await tool.handler(loaded.task.arguments, context);
    handlerDone();
    return await finish(
      settings,
      id,
      outcomeOfResult(result, settings.maxResultBytes),
      latest.task,
    );
  } catch (error) {
    handlerDone();
    if (isParkSignal(error)) return true;
    if (signal.aborted) {
      settings.logger.info('handler stopped after cancellation', { taskId: id });
      return false;
    }
    return finish(settings, id, { error: errorObject(settings, loaded.task, error) }, latest.task);
  }
}

function outcomeOfResult(result: ToolResult, limit: number): Outcome {
  if (result === null || typeof result !== 'object') {
    return { error: { code: RPC.INTERNAL_ERROR, message: 'the tool returned no result object' } };
  }
  const size = jsonSize(result);
  if (size > limit) return { error: resultTooLarge(size, limit).toJSON() };
  return { result: { ...result } };
}

/** A protocol error keeps its code; anything else becomes -32603 with a safe message. */
function errorObject(
  settings: RunnerSettings,
  task: TaskRecord,
  error: unknown,
): JsonRpcErrorObject {
  if (isRpcError(error)) return rpcErrorObject(error);
  settings.logger.error('tool handler threw', {
    taskId: task.id,
    tool: task.tool,
    error: error instanceof Error ? (error.stack ?? error.message) : String(error),
  });
  return { code: RPC.INTERNAL_ERROR, message: `Internal error in tool '${task.tool}'` };
}

type Outcome = { result: JsonObject } | { error: JsonRpcErrorObject };

/**
 * The terminal write. Loses quietly to a task that is already terminal (e.g. cancelled).
 * Resolves true when the task is no longer `working` (so it holds no lease).
 */
async function finish(
  settings: RunnerSettings,
  taskId: string,
  outcome: Outcome,
  latest?: TaskRecord,
): Promise<boolean> {
  const change = (current: TaskRecord): TaskRecord => {
    const now = settings.clock();
    return 'result' in outcome
      ? t.complete(current, outcome.result, now)
      : t.fail(current, outcome.error, now);
  };
  const written = await updateTask(
    settings.store,
    taskId,
    change,
    latest === undefined ? {} : { from: latest },
  );
  return written === undefined || written.status !== 'working';
}

/** `latest` follows the runner's own writes, so the next write need not read the task first. */
function durableBackend(
  settings: RunnerSettings,
  latest: { task: TaskRecord },
  steps: Record<string, unknown>,
  signal: AbortSignal,
): ContextBackend {
  const { store, clock } = settings;
  const task = latest.task;
  let answers = task.inputResponses;
  const write = async (change: (current: TaskRecord) => TaskRecord | undefined) => {
    const written = await updateTask(store, task.id, change, { from: latest.task });
    if (written !== undefined) latest.task = written;
    return written;
  };
  return {
    taskId: task.id,
    principal: task.principal,
    attempt: task.attempt,
    signal,
    answers: () => answers,
    async park(requests: Record<string, InputRequest>, statusMessage?: string) {
      const parked = await write((current) =>
        t.requestInput(current, requests, clock(), statusMessage),
      );
      if (parked === undefined || isTerminal(parked.status))
        throw new RpcError(RPC.INTERNAL_ERROR, 'task ended');
      answers = parked.inputResponses;
    },
    async writeProgress(statusMessage: string) {
      await write((current) =>
        current.status === 'working' ? t.report(current, statusMessage, clock()) : undefined,
      );
    },
    loadStep: (name) => (name in steps ? { found: true, value: steps[name] } : { found: false }),
    async saveStep(name: string, value: unknown) {
      await store.saveStep(task.id, name, value);
      steps[name] = value;
    },
  };
}

/**
 * Renews the lease while the handler runs. A lost lease or a status that is no longer
 * `working` (cancelled from another process, parked) aborts the handler's signal.
 */
function startHeartbeat(
  settings: RunnerSettings,
  taskId: string,
  lease: LeaseGrant,
  controller: AbortController,
): () => void {
  const timer = setInterval(() => {
    settings.store
      .renewLease(taskId, lease.token, settings.leaseMs)
      .then(({ held, status }) => {
        if (status !== undefined && isTerminal(status))
          controller.abort(new Error(`task ${status}`));
        else if (!held && status === 'working') controller.abort(new Error('lease lost'));
      })
      .catch((error: unknown) =>
        settings.logger.warn('lease renewal failed', { taskId, error: String(error) }),
      );
  }, settings.heartbeatMs);
  timer.unref();
  return () => clearInterval(timer);
}
