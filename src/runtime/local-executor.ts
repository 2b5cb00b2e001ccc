import { startAfterReply } from './after-reply.js';
import type { DispatchHint, DispatchReason, Executor, Reservation } from './api.js';
import { FairQueue } from './fair-queue.js';
import type { PermitAsk } from '../store/port.js';
import { timerDelay } from '../task/timers.js';

/** The principal of tasks dispatched without one (a recovery scan's finds, wake-ups). */
const UNKNOWN_PRINCIPAL = '';

/**
 * Runs tasks in this process, at most `concurrency` handlers at once. Event-driven: a dispatch
 * starts work immediately when a slot is free; there is no polling loop, so an idle executor
 * holds no timer or handle. A slot is given back when the handler returns (`handlerDone`), not
 * when its outcome is written: the next task's claim then joins the outcome's commit (with
 * `synchronous=full`, its fsync) instead of waiting for it. `stop` waits for both.
 */
export class LocalExecutor implements Executor {
  readonly #concurrency: number;
  /** Dispatched ids waiting for a slot, taken round robin across principals. */
  readonly #queue: FairQueue;
  readonly #known = new Set<string>();
  /** The permits queued tasks' claims ask for (`DispatchHint.permit`). */
  readonly #permits = new Map<string, PermitAsk>();
  /** Handlers running: the slots in use. */
  #active = 0;
  /** Ids whose handler holds a slot (those `handlerDone` frees), with their principal. */
  readonly #inSlot = new Map<string, string>();
  /** Runs whose handler returned and whose outcome is still being written. */
  #finishing = 0;
  #run: ((taskId: string, permit?: PermitAsk) => Promise<void>) | undefined;
  #stopping = false;
  #pumpScheduled = false;
  #idleWaiters: Array<() => void> = [];

  constructor({ concurrency = 16 }: { concurrency?: number } = {}) {
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new RangeError(`concurrency must be a positive integer, got ${concurrency}`);
    }
    this.#concurrency = concurrency;
    this.#queue = new FairQueue(concurrency);
  }

  start(run: (taskId: string, permit?: PermitAsk) => Promise<void>): void {
    this.#run = run;
    this.#stopping = false;
    this.#pump();
  }

  async dispatch(taskId: string, reason?: DispatchReason, hint?: DispatchHint): Promise<void> {
    if (this.#stopping || this.#known.has(taskId)) return;
    this.#known.add(taskId);
    if (hint?.permit !== undefined) this.#permits.set(taskId, hint.permit);
    // Found by a scan or a wake-up: the runtime did not say whose it is.
    const principal = reason === 'recovery' ? undefined : hint?.principal;
    this.#queue.push(taskId, principal ?? UNKNOWN_PRINCIPAL);
    this.#schedulePump();
  }

  /** A slot for a task created and run here at once; none while queued work waits for one. */
  reserve(principal: string = UNKNOWN_PRINCIPAL): Reservation | undefined {
    if (this.#run === undefined || this.#stopping) return undefined;
    if (this.#active >= this.#concurrency || this.#queue.size > 0) return undefined;
    this.#active += 1;
    this.#queue.started(principal);
    let used = false;
    return {
      run: (taskId, work) => {
        if (used) throw new Error('a reservation runs once');
        used = true;
        this.#known.add(taskId);
        startAfterReply(() => this.#start(taskId, principal, work));
      },
      release: () => {
        if (used) return;
        used = true;
        this.#queue.finished(principal);
        this.#finish(undefined);
      },
    };
  }

  /** How many tasks each principal has waiting for a slot, without the names (for /metrics). */
  queueDepths(): number[] {
    return this.#queue.depths();
  }

  /**
   * Starts queued work on the next turn of the event loop, so the caller (the server answering
   * `tools/call`) sends its reply before the task's first store writes take the thread.
   */
  #schedulePump(): void {
    if (this.#pumpScheduled) return;
    this.#pumpScheduled = true;
    setImmediate(() => {
      this.#pumpScheduled = false;
      this.#pump();
    });
  }

  get activeCount(): number {
    return this.#active;
  }

  async stop(graceMs: number): Promise<void> {
    this.#stopping = true;
    for (const id of this.#queue.drain()) this.#known.delete(id);
    this.#permits.clear();
    if (this.#idle) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise<void>((resolve) => this.#idleWaiters.push(resolve)),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timerDelay(graceMs));
      }),
    ]);
    clearTimeout(timer);
  }

  #pump(): void {
    const run = this.#run;
    if (run === undefined) return;
    while (!this.#stopping && this.#active < this.#concurrency) {
      const next = this.#queue.take();
      if (next === undefined) return;
      this.#active += 1;
      const permit = this.#permits.get(next.taskId);
      this.#permits.delete(next.taskId);
      this.#start(next.taskId, next.principal, () => run(next.taskId, permit));
    }
  }

  /**
   * The handler of `taskId` returned: its slot takes the next task while the outcome is written.
   * At most `concurrency` runs may be finishing so (a store slow to take outcomes must not let
   * finished runs and their results pile up); past that the slot waits for the write.
   */
  handlerDone(taskId: string): void {
    if (this.#finishing >= this.#concurrency || !this.#leaveSlot(taskId)) return;
    this.#active -= 1;
    this.#finishing += 1;
    this.#pump();
  }

  get #idle(): boolean {
    return this.#active === 0 && this.#finishing === 0;
  }

  /** Runs work in a slot already counted in `#active` (and for its principal in `#queue`). */
  #start(taskId: string, principal: string, work: () => Promise<void>): void {
    this.#inSlot.set(taskId, principal);
    void work()
      .catch((error: unknown) => {
        process.emitWarning(`taskrail: running task ${taskId} failed: ${String(error)}`);
      })
      .finally(() => this.#finish(taskId));
  }

  #finish(taskId: string | undefined): void {
    if (taskId === undefined || this.#leaveSlot(taskId)) this.#active -= 1;
    else this.#finishing -= 1;
    if (taskId !== undefined) this.#known.delete(taskId);
    if (this.#idle) for (const resolve of this.#idleWaiters.splice(0)) resolve();
    this.#pump();
  }

  /** Frees the slot `taskId` holds, if it holds one: true when it did. */
  #leaveSlot(taskId: string): boolean {
    const principal = this.#inSlot.get(taskId);
    if (principal === undefined) return false;
    this.#inSlot.delete(taskId);
    this.#queue.finished(principal);
    return true;
  }
}
