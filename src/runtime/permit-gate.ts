import type { LeaseGrant, PermitOutcome, PermitRequest } from '../store/port.js';
import { RPC, TaskrailError } from '../task/errors.js';
import type { TaskRecord } from '../task/record.js';
import { markWaiting } from '../task/run-meta.js';
import * as t from '../task/transitions.js';
import { permitWaitMessage, storedConcurrencyKey } from './concurrency.js';
import { isFencedOut } from './fence.js';
import { finish } from './outcome.js';
import { observe, type RunnerSettings } from './runner-settings.js';
import { updateTask } from './writes.js';

/** The permit an attempt holds, to give back when it ends. */
export interface HeldPermit {
  key: string;
  limit: number;
  taskId: string;
  token: string;
}

export type PermitGate =
  | { pass: true; permit?: HeldPermit; task: TaskRecord }
  /** Over the limit: the task waits (its lease already given back), or another attempt owns it. */
  | { pass: false };

/**
 * Takes the task's concurrency permit before its handler starts. Over the limit, the task
 * says so in its status message and gives its lease back in the refusing write, so the wake
 * that follows a permit's release can claim it; it holds no slot while it waits.
 */
export async function passPermitGate(
  settings: RunnerSettings,
  task: TaskRecord,
  lease: LeaseGrant,
): Promise<PermitGate> {
  const tool = settings.tools.get(task.tool);
  const key = tool === undefined ? undefined : storedConcurrencyKey(tool, task);
  const limit = tool?.task.concurrency?.limit;
  if (key === undefined || limit === undefined) return { pass: true, task };
  const permit = { key, limit, taskId: task.id, token: lease.token };
  const request = { ...permit, createdAt: task.createdAt };
  const waitMessage = permitWaitMessage(key, limit);
  // Already waiting (a recovery scan found it): nothing to write, so a refusal can give the
  // lease back at once.
  const alreadyWaiting = task.statusMessage === waitMessage;
  const first = await acquireOrFail(settings, task, lease, {
    ...request,
    releaseOnRefusal: alreadyWaiting,
  });
  if (first === undefined) return { pass: false };
  if (first.granted) {
    return started(permit, await clearWaitMessage(settings, task, lease, waitMessage));
  }
  if (alreadyWaiting) return { pass: false };
  const waiting = await withMessage(settings, task, lease, waitMessage);
  if (waiting === undefined) return { pass: false };
  observe(settings, (o) => o.permitWaiting?.(task.tool));
  const second = await settings.store.acquirePermit({ ...request, releaseOnRefusal: true });
  wakeAll(settings, second.wake);
  if (!second.granted) return { pass: false };
  return started(permit, await clearWaitMessage(settings, waiting, lease, waitMessage));
}

/**
 * The store's answer, with its waiters woken; undefined when the store cannot keep permits (a
 * CONFIG error; taskrail's own stores all keep them): the task then fails saying so, once.
 */
async function acquireOrFail(
  settings: RunnerSettings,
  task: TaskRecord,
  lease: LeaseGrant,
  request: PermitRequest,
): Promise<PermitOutcome | undefined> {
  try {
    const outcome = await settings.store.acquirePermit(request);
    wakeAll(settings, outcome.wake);
    return outcome;
  } catch (error) {
    if (!(error instanceof TaskrailError && error.code === 'CONFIG')) throw error;
    const outcome = { error: { code: RPC.INTERNAL_ERROR, message: error.message } };
    await finish(settings, task.id, outcome, { fence: { leaseToken: lease.token } });
    return undefined;
  }
}

/** Through the gate, unless the attempt lost its task meanwhile. */
function started(permit: HeldPermit, task: TaskRecord | undefined): PermitGate {
  return task === undefined ? { pass: false } : { pass: true, permit, task };
}

/** Gives the permit back (its lease has mostly ended already) and runs the waiters that fit. */
export async function givePermitBack(settings: RunnerSettings, permit: HeldPermit): Promise<void> {
  const { key, limit, taskId, token } = permit;
  const wake = await settings.store.releasePermit(key, limit, taskId, token).catch(() => []);
  wakeAll(settings, wake);
}

function wakeAll(settings: RunnerSettings, taskIds: readonly string[]): void {
  for (const taskId of taskIds) settings.runSoon?.(taskId);
}

/**
 * The task with its status saying it waits (and its meta, for the dashboard); undefined when
 * another attempt owns it now.
 */
async function withMessage(
  settings: RunnerSettings,
  task: TaskRecord,
  lease: LeaseGrant,
  message: string,
): Promise<TaskRecord | undefined> {
  const change = (current: TaskRecord) =>
    current.status !== 'working' || current.statusMessage === message
      ? undefined
      : markWaiting(t.report(current, message, settings.clock()), 'permit');
  return fencedUpdate(settings, task, lease, change);
}

/** A task that waited starts with its waiting message gone. */
async function clearWaitMessage(
  settings: RunnerSettings,
  task: TaskRecord,
  lease: LeaseGrant,
  message: string,
): Promise<TaskRecord | undefined> {
  if (task.statusMessage !== message) return task;
  const change = (current: TaskRecord) => {
    if (current.statusMessage !== message) return undefined;
    const { statusMessage: _gone, ...rest } = current;
    const updatedAt = Math.max(settings.clock(), current.updatedAt);
    return { ...rest, revision: current.revision + 1, updatedAt };
  };
  return fencedUpdate(settings, task, lease, change);
}

async function fencedUpdate(
  settings: RunnerSettings,
  task: TaskRecord,
  lease: LeaseGrant,
  change: (current: TaskRecord) => TaskRecord | undefined,
): Promise<TaskRecord | undefined> {
  const fence = { leaseToken: lease.token };
  try {
    return await updateTask(settings.store, task.id, change, { from: task, fence });
  } catch (error) {
    if (isFencedOut(error)) return undefined;
    throw error;
  }
}
