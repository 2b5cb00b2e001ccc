import type {
  LeaseGrant,
  PermitAsk,
  PermitOutcome,
  PermitRequest,
  WriteFence,
} from '../../store/port.js';
import { TaskrailError } from '../../task/errors.js';

/** A task waiting for a permit of a key, ordered by creation (then id). */
export interface PermitWaiter {
  taskId: string;
  createdAt: number;
}

/**
 * A key's permits as a store read them inside its atomic step, already pruned: `held` counts
 * live permits other than the requester's, `waiters` are still `working`, oldest first.
 */
export interface PermitBook {
  held: number;
  waiters: readonly PermitWaiter[];
}

export type PermitDecision = { granted: true; wake: string[] } | { granted: false; wake: string[] };

export function byCreation(a: PermitWaiter, b: PermitWaiter): number {
  if (a.createdAt !== b.createdAt) return a.createdAt - b.createdAt;
  return a.taskId < b.taskId ? -1 : a.taskId > b.taskId ? 1 : 0;
}

/**
 * The one rule every store applies: a permit goes to the requester when the live permits and
 * the waiters created before it leave room under the limit. `wake` lists the other waiters
 * that fit in what is left, so whoever asked can run them.
 */
export function decidePermit(book: PermitBook, request: PermitRequest): PermitDecision {
  const others = book.waiters.filter((waiter) => waiter.taskId !== request.taskId);
  const ahead = others.filter((waiter) => byCreation(waiter, request) < 0).length;
  const granted = book.held + ahead < request.limit;
  const free = request.limit - book.held - (granted ? 1 : 0);
  return { granted, wake: wakeable(others, free) };
}

/** The oldest `free` waiters' ids. */
export function wakeable(waiters: readonly PermitWaiter[], free: number): string[] {
  return free <= 0 ? [] : waiters.slice(0, free).map((waiter) => waiter.taskId);
}

/** Rejects a malformed request before a store touches anything. */
export function assertPermitRequest(request: PermitRequest): void {
  assertPermitLimit(request.limit);
  if (typeof request.key !== 'string' || request.key === '') {
    throw new TaskrailError('CONFIG', 'a concurrency key must be a non-empty string');
  }
}

export function assertPermitLimit(limit: number): void {
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new TaskrailError(
      'CONFIG',
      `a concurrency limit must be a positive integer, got ${limit}`,
    );
  }
}

/** A store whose permits are a step of their own after the lease's write (PostgreSQL, Redis). */
export interface PermitSteps {
  acquire(request: PermitRequest): Promise<PermitOutcome>;
  release(key: string, limit: number, taskId: string, token: string): Promise<string[]>;
}

/**
 * The grant with the permit asked for under it (`PermitAsk`), taken right after the lease. A
 * store fault leaves the answer out (the lease is taken already): the holder then asks itself.
 */
export async function grantWithPermit(
  permits: PermitSteps,
  grant: LeaseGrant,
  ask: PermitAsk | undefined,
  task: { id: string; createdAt: () => Promise<number> | number },
): Promise<LeaseGrant> {
  if (ask === undefined) return grant;
  try {
    const createdAt = await task.createdAt();
    const request = { ...ask, taskId: task.id, token: grant.token, createdAt };
    return { ...grant, permit: await permits.acquire(request) };
  } catch {
    return grant;
  }
}

/**
 * The waiters to wake when a write under `fence` took the task out of `working` (its permit is
 * given back); undefined when it did not, or on a store fault (the write stands, and the holder
 * then releases the permit itself).
 */
export async function wakeAfterWrite(
  permits: PermitSteps,
  fence: WriteFence | undefined,
  written: { id: string; status: string },
): Promise<string[] | undefined> {
  if (fence?.permit === undefined || written.status === 'working') return undefined;
  const { key, limit } = fence.permit;
  return permits.release(key, limit, written.id, fence.leaseToken).catch(() => undefined);
}
