import { merged } from './copy.js';
import type { JsonObject, TaskRecord } from './record.js';

/**
 * What the run policy leaves in a task's `meta` for operators to see (the dashboard,
 * `taskrail admin`): the attempts a task may have, and the durable wait it is in. Stored
 * fields, so no display parses a status message. Pure: times are passed in.
 */
export const RUN_META = 'taskrail/run';

/** Why a working task holds no slot: a retry's backoff, `ctx.sleep`, or a concurrency permit. */
export type WaitKind = 'backoff' | 'sleep' | 'permit';

export const WAIT_KINDS: readonly WaitKind[] = ['backoff', 'sleep', 'permit'];

export function isWaitKind(value: string): value is WaitKind {
  return (WAIT_KINDS as readonly string[]).includes(value);
}

interface StoredWait {
  kind: WaitKind;
  /** The wake time (epoch ms, estimated on the store's clock); none for a permit. */
  until?: number;
  /** The revision the wait was written at: any later write (the run woke) ends it. */
  revision: number;
}

interface StoredRunMeta {
  maxAttempts?: number;
  wait?: StoredWait;
}

function runMetaOf(task: Pick<TaskRecord, 'meta'>): StoredRunMeta {
  const raw = task.meta[RUN_META];
  return raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? raw : {};
}

function withRunMeta(task: TaskRecord, run: StoredRunMeta): TaskRecord {
  return merged(task, { meta: merged(task.meta, { [RUN_META]: run as JsonObject }) });
}

/**
 * The meta of a new task whose tool allows `maxAttempts` attempts (1 for `retry: false`). Any
 * run meta the creation brought along is replaced: only the runtime writes it.
 */
export function metaWithMaxAttempts(meta: JsonObject, maxAttempts: number): JsonObject {
  return merged(meta, { [RUN_META]: { maxAttempts } });
}

/**
 * `next` (a task's next version, revision already bumped) marked as waiting. Call it on the
 * very record that is written: the mark holds only while the revision is unchanged.
 */
export function markWaiting(next: TaskRecord, kind: WaitKind, until?: number): TaskRecord {
  const wait: StoredWait = {
    kind,
    revision: next.revision,
    ...(until === undefined ? {} : { until }),
  };
  return withRunMeta(next, { ...runMetaOf(next), wait });
}

/** How a task's run looks to an operator. */
export interface RunView {
  attempt: number;
  /** Known for tasks created since this was recorded. */
  maxAttempts?: number;
  waiting?: WaitView;
}

export interface WaitView {
  kind: WaitKind;
  /** Epoch ms the wait ends (backoff, sleep). */
  until?: number;
  /** The wake time has passed: the task is due, or has just been claimed. */
  due: boolean;
}

export function runViewOf(task: TaskRecord, now: number): RunView {
  const run = runMetaOf(task);
  const view: RunView = { attempt: task.attempt };
  if (typeof run.maxAttempts === 'number') view.maxAttempts = run.maxAttempts;
  const waiting = currentWait(task, run.wait, now);
  if (waiting !== undefined) view.waiting = waiting;
  return view;
}

function currentWait(
  task: TaskRecord,
  wait: StoredWait | undefined,
  now: number,
): WaitView | undefined {
  if (wait === undefined || task.status !== 'working' || wait.revision !== task.revision) {
    return undefined;
  }
  if (!isWaitKind(String(wait.kind))) return undefined;
  if (typeof wait.until !== 'number') return { kind: wait.kind, due: false };
  return { kind: wait.kind, until: wait.until, due: wait.until <= now };
}

/** "2 of 3", or "2" when the limit was not recorded. */
export function attemptsText(view: RunView): string {
  return view.maxAttempts === undefined
    ? String(view.attempt)
    : `${view.attempt} of ${view.maxAttempts}`;
}

/** "backoff until 2026-…Z", "sleep until …", "permit", with "(due)" once the time has passed. */
export function waitText(wait: WaitView): string {
  const until = wait.until === undefined ? '' : ` until ${new Date(wait.until).toISOString()}`;
  return `${wait.kind}${until}${wait.due ? ' (due)' : ''}`;
}
