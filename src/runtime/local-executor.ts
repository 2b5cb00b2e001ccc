import { startAfterReply } from './after-reply.js';
import type { Executor, Reservation } from './api.js';

/**
 * Runs tasks in this process, at most `concurrency` handlers at once. Event-driven: a dispatch
 * starts work immediately when a slot is free; there is no polling loop, so an idle executor
 * holds no timer or handle. A slot is given back when the handler returns (`handlerDone`), not
 * when its outcome is written: the next task's claim then joins the outcome's commit (with
 * `synchronous=full`, its fsync) instead of waiting for it. `stop` waits for both.
 */
export class LocalExecutor implements Executor {
  readonly #concurrency: number;
  /** Dispatched ids waiting for a slot: `#queue[#head]` is next (an O(1) take, see #take). */
  #queue: string[] = [];
  #head = 0;
  readonly #known = new Set<string>();
  /** Handlers running: the slots in use. */
  #active = 0;
  /** Ids whose handler holds a slot (those `handlerDone` frees). */
  readonly #inSlot = new Set<string>();
  /** Runs whose handler returned and whose outcome is still being written. */
  #finishing = 0;
  #run: ((taskId: string) => Promise<void>) | undefined;
  #stopping = false;
  #pumpScheduled = false;
  #idleWaiters: Array<() => void> = [];

  constructor({ concurrency = 16 }: { concurrency?: number } = {}) {
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new RangeError(`concurrency must be a positive integer, got ${concurrency}`);
    }
    this.#concurrency = concurrency;
  }

  start(run: (taskId: string) => Promise<void>): void {
    this.#run = run;
    this.#stopping = false;
    this.#pump();
  }

  async dispatch(taskId: string): Promise<void> {
    if (this.#stopping || this.#known.has(taskId)) return;
    this.#known.add(taskId);
    this.#queue.push(taskId);
    this.#schedulePump();
  }

  /** A slot for a task created and run here at once; none while queued work waits for one. */
  reserve(): Reservation | undefined {
    if (this.#run === undefined || this.#stopping) return undefined;
    if (this.#active >= this.#concurrency || this.#waiting > 0) return undefined;
    this.#active += 1;
    let used = false;
    return {
      run: (taskId, work) => {
        if (used) throw new Error('a reservation runs once');
        used = true;
        this.#known.add(taskId);
        startAfterReply(() => this.#start(taskId, work));
      },
      release: () => {
        if (used) return;
        used = true;
        this.#finish(undefined);
      },
    };
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
    for (const id of this.#queue.slice(this.#head)) this.#known.delete(id);
    this.#queue = [];
    this.#head = 0;
    if (this.#idle) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise<void>((resolve) => this.#idleWaiters.push(resolve)),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, graceMs);
      }),
    ]);
    clearTimeout(timer);
  }

  #pump(): void {
    const run = this.#run;
    if (run === undefined) return;
    while (!this.#stopping && this.#active < this.#concurrency && this.#waiting > 0) {
      const taskId = this.#take();
      this.#active += 1;
      this.#start(taskId, () => run(taskId));
    }
  }

  get #waiting(): number {
    return this.#queue.length - this.#head;
  }

  /**
   * The next queued id. `shift()` moves every element left, so draining a backlog of n
   * dispatched tasks cost O(n²) (a backlog forms whenever creates outpace the slots); the
   * consumed head is dropped in one step once it is most of the array.
   */
  #take(): string {
    const taskId = this.#queue[this.#head] as string;
    this.#head += 1;
    if (this.#head === this.#queue.length) {
      this.#queue = [];
      this.#head = 0;
    } else if (this.#head >= 1024 && this.#head * 2 >= this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    return taskId;
  }

  /**
   * The handler of `taskId` returned: its slot takes the next task while the outcome is written.
   * At most `concurrency` runs may be finishing so (a store slow to take outcomes must not let
   * finished runs and their results pile up); past that the slot waits for the write.
   */
  handlerDone(taskId: string): void {
    if (this.#finishing >= this.#concurrency || !this.#inSlot.delete(taskId)) return;
    this.#active -= 1;
    this.#finishing += 1;
    this.#pump();
  }

  get #idle(): boolean {
    return this.#active === 0 && this.#finishing === 0;
  }

  /** Runs work in a slot already counted in `#active`. */
  #start(taskId: string, work: () => Promise<void>): void {
    this.#inSlot.add(taskId);
    void work()
      .catch((error: unknown) => {
        process.emitWarning(`taskrail: running task ${taskId} failed: ${String(error)}`);
      })
      .finally(() => this.#finish(taskId));
  }

  #finish(taskId: string | undefined): void {
    if (taskId === undefined || this.#inSlot.delete(taskId)) this.#active -= 1;
    else this.#finishing -= 1;
    if (taskId !== undefined) this.#known.delete(taskId);
    if (this.#idle) for (const resolve of this.#idleWaiters.splice(0)) resolve();
    this.#pump();
  }
}
