import type { Logger, Reservation } from '../../runtime/api.js';
import { startAfterReply } from '../../runtime/after-reply.js';
import { fairTag, FairGate } from './fair-gate.js';
import { Slots } from './slots.js';
import { timerDelay } from '../../task/timers.js';

/**
 * The runs one worker process allows at once, for both job engines: jobs the engine delivers
 * (`runJob`) and tasks this process creates and starts itself (`reserve`) share the slots, so
 * at most `concurrency` run at once; `inFlight` is what a stop waits for. `gate` counts the
 * slots each principal holds here, for fair share's more-than-half rule.
 */
export class WorkerSlots {
  readonly #slots: Slots;
  readonly gate: FairGate;
  readonly #localRuns = new Set<Promise<void>>();
  readonly #warn: (message: string, error: unknown) => void;

  constructor(concurrency: number, warn: (message: string, error: unknown) => void) {
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new RangeError(`concurrency must be a positive integer, got ${concurrency}`);
    }
    this.#slots = new Slots(concurrency);
    this.gate = new FairGate(concurrency);
    this.#warn = warn;
  }

  /** Runs a delivered job's task once a slot is free; `tag` is its principal's (`fairTag`). */
  async runJob(tag: string | undefined, run: () => Promise<void>): Promise<void> {
    this.gate.took(tag);
    try {
      await this.#slots.acquire();
      try {
        await run();
      } finally {
        this.#slots.release();
      }
    } finally {
      this.gate.gaveBack(tag);
    }
  }

  /** Resolves once a slot is free (takes nothing), or at once after `close`. */
  whenFree(): Promise<void> {
    return this.#slots.whenFree();
  }

  /** The process stops: nobody waits for a free slot any more. */
  close(): void {
    this.#slots.close();
  }

  /** A free slot for a task about to be created and run here, or undefined when none is free. */
  reserve(principal?: string): Reservation | undefined {
    if (!this.#slots.tryAcquire()) return undefined;
    const tag = principal === undefined ? undefined : fairTag(principal);
    this.gate.took(tag);
    const giveBack = () => {
      this.#slots.release();
      this.gate.gaveBack(tag);
    };
    let used = false;
    return {
      run: (taskId, work) => {
        if (used) throw new Error('a reservation runs once');
        used = true;
        const done = new Promise<void>((resolve) => startAfterReply(resolve))
          .then(work)
          .catch((error: unknown) => this.#warn(`running task ${taskId} failed`, error))
          .finally(() => {
            giveBack();
            this.#localRuns.delete(done);
          });
        this.#localRuns.add(done);
      },
      release: () => {
        if (used) return;
        used = true;
        giveBack();
      },
    };
  }

  /** The reserved runs still going. */
  get inFlight(): Promise<void>[] {
    return [...this.#localRuns];
  }
}

/** Resolves when `work` settles or after `graceMs`, whichever comes first. */
export async function waitAtMost(work: Promise<unknown>, graceMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    work,
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timerDelay(graceMs));
    }),
  ]);
  clearTimeout(timer);
}

/** An executor's warning: to the logger when there is one, else a process warning. */
export function warnTo(logger: Logger | undefined, message: string, error: unknown): void {
  const detail = error instanceof Error ? error.message : String(error);
  if (logger !== undefined) logger.warn(message, { error: detail });
  else process.emitWarning(`taskrail: ${message}: ${detail}`);
}
