import type { LeaseGrant, PermitAsk, PermitOutcome, PermitRequest } from '../store/port.js';
import { RPC, TaskrailError } from '../task/errors.js';
import type { TaskRecord } from '../task/record.js';
import { markWaiting } from '../task/run-meta.js';
import * as t from '../task/transitions.js';
import { permitAskOf, permitWaitMessage } from './concurrency.js';
import { isFencedOut, type RunFence } from './fence.js';
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
 * that follows a permit's release can claim it; it holds no slot while it waits. `asked`: the
 * permit the lease's own write asked for (`CreateOptions.lease.permit`, `ClaimOptions.permit`),
 * whose answer is `lease.permit`: then no write of its own is needed when it was granted.
 */
export async function passPermitGate(
  settings: RunnerSettings,
  task: TaskRecord,
  lease: LeaseGrant,
  asked?: PermitAsk,
): Promise<PermitGate> {
  const own = permitAskOf(settings.tools.get(task.tool), task);
  // No limit, and no permit asked in the lease's write: nothing to take or give back.
  if (own === undefined && (asked === undefined || lease.permit === undefined)) {
    return { pass: true, task };
  }
  const folded = await foldedAnswer(settings, task, lease, asked, own);
  if (own === undefined) return { pass: true, task };
  const { key, limit } = own;
  const permit = { key, limit, taskId: task.id, token: lease.token };
  const request = { ...permit, createdAt: task.createdAt };
  const waitMessage = permitWaitMessage(key, limit);
  // Already waiting (a recovery scan found it): nothing to write, so a refusal can give the
  // lease back at once.
  const alreadyWaiting = task.statusMessage === waitMessage;
  const first =
    folded !== undefined && !(alreadyWaiting && !folded.granted)
      ? folded
      : await acquireOrFail(settings, task, lease, {
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
  wakeAll(settings, second.wake, permit);
  if (!second.granted) return { pass: false };
  return started(permit, await clearWaitMessage(settings, waiting, lease, waitMessage));
}

/**
 * The answer the lease's write gave, with its waiters woken, when it was for the task's own key
 * and limit. A permit asked for another key (a caller that knew the key wrong) is given back.
 */
async function foldedAnswer(
  settings: RunnerSettings,
  task: TaskRecord,
  lease: LeaseGrant,
  asked: PermitAsk | undefined,
  own: PermitAsk | undefined,
): Promise<PermitOutcome | undefined> {
  const answer = lease.permit;
  if (asked === undefined || answer === undefined) return undefined;
  wakeAll(settings, answer.wake, asked);
  if (asked.key === own?.key && asked.limit === own.limit) return answer;
  if (answer.granted) {
    await givePermitBack(settings, { ...asked, taskId: task.id, token: lease.token });
  }
  return undefined;
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
    wakeAll(settings, outcome.wake, request);
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

/**
 * Names the permit in the attempt's fence, so the write that ends the lease gives it back and
 * wakes its waiters. Returns whether that has happened (else `givePermitBack` is still due).
 */
export function fenceWithPermit(
  settings: RunnerSettings,
  fence: RunFence,
  permit: HeldPermit,
): () => boolean {
  let returned = false;
  fence.permit = { key: permit.key, limit: permit.limit };
  fence.permitReturned = (wake) => {
    returned = true;
    wakeAll(settings, wake, permit);
  };
  return () => returned;
}

/** Gives the permit back (its lease has mostly ended already) and runs the waiters that fit. */
export async function givePermitBack(settings: RunnerSettings, permit: HeldPermit): Promise<void> {
  const { key, limit, taskId, token } = permit;
  const wake = await settings.store.releasePermit(key, limit, taskId, token).catch(() => []);
  wakeAll(settings, wake, permit);
}

/** Runs waiters of `permit`'s key, asking for the permit in their claim. */
function wakeAll(settings: RunnerSettings, taskIds: readonly string[], permit?: PermitAsk): void {
  const ask = permit === undefined ? undefined : { key: permit.key, limit: permit.limit };
  for (const taskId of taskIds) settings.runSoon?.(taskId, ask);
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
