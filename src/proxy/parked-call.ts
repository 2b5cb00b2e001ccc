import { HandBackSignal } from '../runtime/park.js';
import { updateTask } from '../runtime/writes.js';
import type { TaskStore } from '../store/port.js';
import type { TaskRecord } from '../task/record.js';
import { isTerminal } from '../task/status.js';
import { withdrawQuestions } from '../task/withdrawn.js';
import type { LiveCall } from './live-call.js';

export interface ParkedCallDeps {
  store: TaskStore;
  calls: Map<string, LiveCall>;
  /** How often a parked task is checked for an answer, a cancellation or an expiry. */
  parkedCheckMs: number;
  /** This proxy process, as named in the holder step. */
  owner: string;
  /** Claims the task and runs it in this process (TaskRuntime.runHere). */
  runHere(taskId: string): Promise<boolean>;
}

/** Which process holds a parked task's live upstream call, and until when it vouches for it. */
export interface Holder {
  owner: string;
  until: number;
}

export const HOLDER_STEP = 'proxy:holder';
/** A holder that stops refreshing (a crashed process) is given up after this long. */
const HOLD_MS = 12_000;
/** How long the holder keeps trying to take back a run another process handed back. */
const TAKE_BACK_MS = 30_000;
const TAKE_BACK_RETRY_MS = 100;

/**
 * A run that finds a task's call key but not its live call: when a live process holds that
 * call (its holder step is fresh), the run is handed back for that process to take, instead
 * of failing "interrupted" — with several workers, the re-run after an answer lands on any.
 */
export function handBackToHolder(holder: Holder | undefined, owner: string): void {
  if (holder === undefined || holder.owner === owner || holder.until <= Date.now()) return;
  throw new HandBackSignal(`its upstream call is open in another process (${holder.owner})`);
}

/**
 * While a task is parked no handler runs, so the process holding its upstream call watches
 * the record: it vouches for the call (the holder step, refreshed), drops the call when the
 * task ends without an answer (cancelled, expired), and once answered makes sure the re-run
 * happens here, where the call is, taking it back if another process got it first.
 */
export function watchWhileParked(
  key: string,
  live: LiveCall,
  taskId: string,
  deps: ParkedCallDeps,
): void {
  if (live.watched) return;
  live.watched = true;
  let vouchedAt = 0;
  const vouch = (): void => {
    if (Date.now() - vouchedAt < HOLD_MS / 3) return;
    vouchedAt = Date.now();
    const holder: Holder = { owner: deps.owner, until: vouchedAt + HOLD_MS };
    void deps.store.saveStep(taskId, HOLDER_STEP, holder).catch(() => undefined);
  };
  const stop = (): void => {
    clearInterval(timer);
    live.watched = false;
  };
  vouch();
  const timer = setInterval(() => {
    void deps.store
      .get(taskId)
      .then((record) => withdrawnByUpstream(record, live, deps.store))
      .then((record) => {
        if (record !== undefined && record.status === 'input_required') return vouch();
        stop();
        if (record === undefined || isTerminal(record.status)) {
          deps.calls.delete(key);
          live.cancel(true);
        } else takeBack(live, taskId, deps, Date.now() + TAKE_BACK_MS);
      })
      .catch(() => undefined);
  }, deps.parkedCheckMs);
  timer.unref();
}

/**
 * The parked task stops asking what the upstream no longer waits for (its request timed out
 * or was cancelled, or its call ended): those questions are recorded as withdrawn, which
 * refuses a late answer, and the task goes back to `working`, saying why.
 */
async function withdrawnByUpstream(
  record: TaskRecord | undefined,
  live: LiveCall,
  store: TaskStore,
): Promise<TaskRecord | undefined> {
  if (record?.status !== 'input_required') return record;
  const reasons: Record<string, string> = {};
  for (const question of live.questions) {
    const pending =
      question.key in record.inputRequests && !(question.key in record.inputResponses);
    if (pending && question.withdrawn !== undefined) reasons[question.key] = question.withdrawn;
  }
  if (Object.keys(reasons).length === 0) return record;
  return updateTask(
    store,
    record.id,
    (current) => withdrawQuestions(current, reasons, Date.now()),
    {
      from: record,
    },
  );
}

/** Tries to run the answered task here until a run here has the call, or the deadline. */
function takeBack(live: LiveCall, taskId: string, deps: ParkedCallDeps, deadline: number): void {
  if (live.attached || live.outcome !== undefined || Date.now() > deadline) return;
  void deps
    .runHere(taskId)
    .catch(() => false)
    .then(async (running) => {
      if (running) return;
      const record = await deps.store.get(taskId).catch(() => undefined);
      if (record?.status !== 'working') return;
      setTimeout(() => takeBack(live, taskId, deps, deadline), TAKE_BACK_RETRY_MS).unref();
    });
}
