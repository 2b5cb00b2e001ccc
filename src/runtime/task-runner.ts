import { performance } from 'node:perf_hooks';
import type { ClaimOptions, LeaseGrant, PermitAsk } from '../store/port.js';
import { RPC, isStoreUnavailable } from '../task/errors.js';
import type { TaskRecord } from '../task/record.js';
import * as t from '../task/transitions.js';
import { stopReasonOf } from './abort-reasons.js';
import { RunContext } from './context.js';
import { durableBackend, type RunState } from './durable-backend.js';
import type { WaitingRun } from './durable-wait.js';
import { isFencedOut, noteFencedOut } from './fence.js';
import { endFailedAttempt, settleAttempt, sleepDurably, type Settled } from './attempt.js';
import { outageGraceMs, startHeartbeat } from './heartbeat.js';
import { outcomeOfBigResult } from './big-result.js';
import { finish, interruptionRefusal, type FinishResult } from './outcome.js';
import { isHandBackSignal, isParkSignal } from './park.js';
import { fenceWithPermit, givePermitBack, passPermitGate, type HeldPermit } from './permit-gate.js';
import { RunAbort } from './run-abort.js';
import { isSleepSignal } from './sleep-signal.js';
import { observe, type RunnerSettings } from './runner-settings.js';
import { describeError, withStoreRetry } from './store-health.js';
import type { RunnableTool } from './tool.js';
import { updateTask } from './writes.js';

export type { RunnerSettings } from './runner-settings.js';

/**
 * Runs one task to its next resting point (terminal, or parked for input) under a lease. Safe to
 * call for any id at any time: if the task is not runnable or someone else holds it, it returns.
 * A store that cannot be reached leaves the task runnable for the next scan.
 */
export async function runTask(
  settings: RunnerSettings,
  taskId: string,
  permit?: PermitAsk,
): Promise<void> {
  // Still running or finishing here: its lease may have run out in an outage, but the attempt
  // is alive and its outcome is being offered; a claim would run the tool a second time. The
  // dispatch is kept for when that run ends (it may have parked, and been answered already).
  if (settings.leases.has(taskId)) {
    settings.heldBack?.add(taskId);
    return;
  }
  let lease: LeaseGrant | undefined;
  const claimSentAt = performance.now();
  // Just after an outage of the store, a holder elsewhere gets a renewal interval to renew
  // its lease before this process takes it as lost.
  const spareExpired = settings.health.recentlyDown(outageGraceMs(settings.heartbeatMs));
  const options: ClaimOptions = { load: true, spareExpired };
  if (permit !== undefined) options.permit = permit;
  try {
    lease = await settings.store.claim(taskId, settings.owner, settings.leaseMs, options);
    settings.health.ok();
  } catch (error) {
    if (!isStoreUnavailable(error)) throw error;
    settings.health.failed('claim', error);
    return;
  }
  if (lease === undefined && spareExpired) settings.spared?.(taskId);
  if (lease !== undefined) await runClaimedTask(settings, taskId, lease, claimSentAt, permit);
}

/**
 * Runs a task whose lease this runner already holds (claimed, or taken over from the dead).
 * `claimSentAt`: when the claiming write was sent (performance.now()); the self-fencing
 * deadline counts from it. `asked`: the permit the claim asked for (`ClaimOptions.permit`).
 */
export function runClaimedTask(
  settings: RunnerSettings,
  taskId: string,
  lease: LeaseGrant,
  claimSentAt = performance.now(),
  asked?: PermitAsk,
): Promise<void> {
  const run = newRunState(lease, claimSentAt, asked);
  return runUnderLease(settings, taskId, lease, run, async () => {
    const { loaded } = lease;
    if (loaded !== undefined) {
      // The store read both in the claiming write.
      const task = await prepare(settings, taskId, lease, loaded.task);
      return task === undefined ? undefined : { task, steps: loaded.steps };
    }
    // Both reads at once: one round trip less before the handler starts.
    const [task, steps] = await Promise.all([
      prepare(settings, taskId, lease),
      settings.store.loadSteps(taskId),
    ]);
    return task === undefined ? undefined : { task, steps };
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
  createSentAt = performance.now(),
  asked?: PermitAsk,
): () => Promise<void> {
  const run = newRunState(lease, createSentAt, asked);
  settings.running.set(task.id, run.abort);
  settings.leases.set(task.id, lease.token);
  return () => runUnderLease(settings, task.id, lease, run, async () => ({ task, steps: {} }));
}

type LeasedRun = RunState & { claimSentAt: number; asked: PermitAsk | undefined };

/** A run's state; its writes carry its lease as their fence. One literal: no spread's copy. */
function newRunState(lease: LeaseGrant, claimSentAt: number, asked?: PermitAsk): LeasedRun {
  return {
    abort: new RunAbort(),
    leaseLost: false,
    fence: { leaseToken: lease.token },
    fencedOut: false,
    claimSentAt,
    asked,
  };
}

interface Loaded {
  task: TaskRecord;
  steps: Record<string, unknown>;
}

/** How a run ended: at rest (no lease left), handed back, or abandoned (the next claim counts it). */
type RunEnd = 'rested' | 'release' | 'abandon';

async function runUnderLease(
  settings: RunnerSettings,
  taskId: string,
  lease: LeaseGrant,
  run: LeasedRun,
  load: () => Promise<Loaded | undefined>,
): Promise<void> {
  const controller = run.abort;
  settings.running.set(taskId, controller);
  settings.leases.set(taskId, lease.token);
  // The lease's expiry is on the store's clock: the difference dates durable waits on it.
  run.storeOffsetMs = lease.expiresAt - settings.leaseMs - settings.clock();
  const stopHeartbeat = startHeartbeat(settings, taskId, lease, controller, run, run.claimSentAt);
  let end: RunEnd = 'release';
  let loaded: Loaded | undefined;
  let permit: HeldPermit | undefined;
  // Granted in the lease's write: given back whatever happens before the gate takes it over.
  if (lease.permit?.granted === true && run.asked !== undefined) {
    permit = { ...run.asked, taskId, token: lease.token };
  }
  let permitReturned = () => false;
  try {
    loaded = controller.aborted ? undefined : await load();
    if (loaded !== undefined && (await mayStart(settings, loaded.task, lease))) {
      const gate = await passPermitGate(settings, loaded.task, lease, run.asked);
      permit = undefined; // the gate gave back a permit it did not keep
      // Over its concurrency limit: the refusing write gave the lease back already.
      if (!gate.pass) end = 'rested';
      else {
        permit = gate.permit;
        if (permit !== undefined) permitReturned = fenceWithPermit(settings, run.fence, permit);
        // From here the tool may have started: a run that ends by throwing is not known to
        // have ended cleanly, so its lease is abandoned (the next claim counts it).
        end = 'abandon';
        end = await execute(settings, { task: gate.task, steps: loaded.steps }, run, lease);
      }
    }
  } catch (error) {
    if (!isStoreUnavailable(error)) throw error;
    settings.health.failed('load task', error);
  } finally {
    stopHeartbeat();
    if (settings.running.get(taskId) === controller) settings.running.delete(taskId);
    if (settings.leases.get(taskId) === lease.token) settings.leases.delete(taskId);
    if (settings.heldBack?.delete(taskId) === true) settings.runSoon?.(taskId);
    if (stopReasonOf(controller) === 'shutdown' && end === 'release') end = 'abandon';
    // An interruption not yet counted (the re-run's first write did not happen) must stay on
    // record, or the next claim would look like a first run.
    if (lease.interrupted && loaded === undefined && end === 'release') end = 'abandon';
    // A write that took the task out of `working` already dropped the lease in the same
    // transaction; releasing it again would cost a write for nothing.
    if (end !== 'rested') await handBack(settings, taskId, lease.token, end === 'abandon');
    if (permit !== undefined && !permitReturned()) await givePermitBack(settings, permit);
  }
}

/** An abandoned lease stays, expired: the next claim reports the run as interrupted. */
export async function handBack(
  settings: RunnerSettings,
  taskId: string,
  token: string,
  abandoned: boolean,
): Promise<void> {
  let abandon = abandoned;
  const release = async () => {
    try {
      await settings.store.releaseLease(taskId, token, abandon ? { abandoned: true } : {});
    } catch (error) {
      // Its fate is unknown: from now on only a release that keeps the evidence will do.
      abandon = true;
      throw error;
    }
  };
  await withStoreRetry(release, {
    health: settings.health,
    operation: 'release lease',
    budgetMs: 2000,
  }).catch(() => undefined); // the lease then runs out, which says the same thing, later
}

/**
 * Loads the task (unless the claim already did) and decides whether it may run: a re-run after
 * a crash is counted or refused.
 */
async function prepare(
  settings: RunnerSettings,
  taskId: string,
  lease: LeaseGrant,
  claimed?: TaskRecord,
): Promise<TaskRecord | undefined> {
  const task = claimed ?? (await settings.store.get(taskId));
  if (task === undefined || task.status !== 'working') return undefined;
  const tool = settings.tools.get(task.tool);
  const fence = { leaseToken: lease.token };
  if (tool === undefined) {
    const message = `tool '${task.tool}' is not registered here`;
    await finish(settings, taskId, { error: { code: RPC.INTERNAL_ERROR, message } }, { fence });
    return undefined;
  }
  if (!lease.interrupted) return task;
  const refusal = interruptionRefusal(tool, task, settings.maxAttempts);
  if (refusal !== undefined) {
    const error = { code: RPC.INTERNAL_ERROR, message: refusal };
    await finish(settings, taskId, { error }, { fence });
    return undefined;
  }
  settings.logger.warn('re-running an interrupted task', { taskId, attempt: task.attempt + 1 });
  const retry = (current: TaskRecord) =>
    current.status === 'working' ? t.retry(current, settings.clock()) : undefined;
  // Fenced out already: another claim came first, and that run counts the attempt.
  const retried = await updateTask(settings.store, taskId, retry, { fence }).catch(
    (error: unknown) => {
      if (isFencedOut(error)) return undefined;
      throw error;
    },
  );
  if (retried !== undefined) observe(settings, (o) => o.retrying?.(task.tool, 'interrupted'));
  return retried;
}

/**
 * A `retry: false` tool starts only once its claim is known to survive a failover of the store
 * (see `TaskStore.confirmLease`): a lost claim would make the next claim look like a first run.
 * Otherwise the run ends before the tool starts and the lease is handed back, so the task runs
 * later, from its first attempt.
 */
async function mayStart(
  settings: RunnerSettings,
  task: TaskRecord,
  lease: LeaseGrant,
): Promise<boolean> {
  const tool = settings.tools.get(task.tool);
  if (tool?.task.retry !== false || settings.store.confirmLease === undefined) return true;
  const durability = await settings.store.confirmLease(task.id, lease.token);
  if (durability === 'durable') return true;
  settings.logger.warn('not starting a retry: false task: its claim may not survive a failover', {
    taskId: task.id,
    claim: durability,
  });
  return false;
}

/** Runs the handler and records where it came to rest. */
async function execute(
  settings: RunnerSettings,
  loaded: Loaded,
  run: RunState,
  lease: LeaseGrant,
): Promise<RunEnd> {
  const tool = settings.tools.get(loaded.task.tool) as RunnableTool;
  const latest = { task: loaded.task };
  const context = new RunContext(durableBackend(settings, latest, loaded.steps, run));
  // The run policy's time limit (runPolicyOf's `timeoutMs`), without building the policy.
  const settled = await settleAttempt(tool, loaded.task, context, run, tool.task.timeoutMs);
  // From here the outcome is in hand: the store's fence decides whether it lands, not the clock.
  run.settled = true;
  // Output the handler did not await is written before the outcome, while the lease holds.
  await context.flushOutput();
  settings.handlerDone?.(loaded.task.id);
  // Once the handler is done there is nothing left to abort: the task's own terminal write
  // must not fire its signal.
  context.dispose();
  const { id } = loaded.task;
  if (settings.running.get(id) === run.abort) settings.running.delete(id);
  // The store refused one of its writes: the task and its lease are another attempt's now.
  if (run.fencedOut) return 'rested';
  if (context.parkedOn !== undefined) return parked(settings, id, settled);
  if (run.leaseLost) {
    // The attempt no longer owns its task: nothing it did is written, and the lease (if still
    // its own) is kept as evidence, so recovery counts the attempt as interrupted.
    settings.logger.warn('outcome discarded: the run lost its lease', { taskId: id });
    return 'abandon';
  }
  if ('timedOut' in settled) {
    return endFailedAttempt(settings, waitingOf(lease, loaded, latest, run), run, settled);
  }
  if (context.sleepingFor !== undefined) {
    if (!('threw' in settled && isSleepSignal(settled.threw))) warnSwallowed(settings, id);
    return sleepDurably(settings, waitingOf(lease, loaded, latest, run), context.sleepingFor);
  }
  if ('threw' in settled && isHandBackSignal(settled.threw)) {
    settings.logger.info('run handed back: it belongs in another process', {
      taskId: id,
      reason: settled.threw.message,
    });
    return 'release';
  }
  const finishing = {
    latest: latest.task,
    attempt: loaded.task.attempt,
    // Only the store ends the offer: a renewal that found another holder, or a fenced write.
    giveUp: () => run.takenOver === true,
    fence: run.fence,
  };
  const finished = (written: FinishResult): RunEnd => {
    if (written === 'fenced') noteFencedOut(settings.logger, id, run);
    return endOfFinish(written);
  };
  if ('returned' in settled) {
    const keepsStructured = tool.declaresOutputSchema === true;
    const { returned } = settled;
    const outcome = await outcomeOfBigResult(settings, id, returned, run.fence, keepsStructured);
    if (outcome === 'unwritten') return 'abandon';
    if (outcome === 'fenced') return finished('fenced');
    return finished(await finish(settings, id, outcome, finishing));
  }
  const error = settled.threw;
  if (isStoreUnavailable(error)) {
    settings.logger.warn('run stopped by task store trouble; the task is handed back', {
      taskId: id,
      error: describeError(error),
    });
    return 'abandon';
  }
  if (run.abort.aborted) return stopped(settings, id, run.abort);
  return endFailedAttempt(settings, waitingOf(lease, loaded, latest, run), run, settled);
}

/** A run that goes on to wait (a retry's backoff, a durable sleep); made only then. */
function waitingOf(
  lease: LeaseGrant,
  loaded: Loaded,
  latest: { task: TaskRecord },
  run: RunState,
): WaitingRun {
  return {
    taskId: loaded.task.id,
    token: lease.token,
    attempt: loaded.task.attempt,
    latest: latest.task,
    storeOffsetMs: run.storeOffsetMs ?? 0,
  };
}

function warnSwallowed(settings: RunnerSettings, taskId: string): void {
  settings.logger.warn(
    'the handler went on after ctx.sleep; its outcome is ignored and the task sleeps ' +
      '(let the error from ctx.sleep propagate)',
    { taskId },
  );
}

/** A fenced-out run holds no lease any more: it ends as at rest, releasing nothing. */
function endOfFinish(written: FinishResult): RunEnd {
  if (written === 'rested' || written === 'fenced') return 'rested';
  return written === 'unwritten' ? 'abandon' : 'release';
}

/** Once a handler asked, the task waits for the answers whatever the handler did next. */
function parked(settings: RunnerSettings, taskId: string, settled: Settled): RunEnd {
  if (!('threw' in settled && isParkSignal(settled.threw))) {
    settings.logger.warn(
      'the handler went on after asking for input; its outcome is ignored and the task waits ' +
        'for the answer (let the error from ctx.input/ctx.elicit propagate)',
      { taskId },
    );
  }
  return 'rested';
}

/** Says what really stopped a handler that ended with its signal aborted. */
function stopped(settings: RunnerSettings, taskId: string, signal: RunAbort): RunEnd {
  const why = stopReasonOf(signal);
  if (why === 'shutdown') {
    settings.logger.warn(
      'graceful stop: the handler was aborted after the grace period; the task is handed back ' +
        'as interrupted (a retry: false tool then fails instead of running twice)',
      { taskId },
    );
    return 'abandon';
  }
  settings.logger.info('handler stopped after its task ended', {
    taskId,
    reason: signal.reason instanceof Error ? signal.reason.message : String(signal.reason),
  });
  return 'release';
}
