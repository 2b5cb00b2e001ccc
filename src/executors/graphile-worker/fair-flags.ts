import type { WorkerEvents } from 'graphile-worker';
import type pg from 'pg';
import { quoteIdent } from '../../stores/postgres/migrations.js';
import { literal } from './enqueue-trigger.js';
import { peekDepth, QuietLook, type FairGate } from '../shared/fair-gate.js';
import { waitAtMost } from '../shared/worker-slots.js';

/** A fetch whose end was never reported holds the next one back at most this long. */
const FETCH_PATIENCE_MS = 2000;

/**
 * Fair share's more-than-half rule on a graphile-worker runner. Each job carries its principal's
 * `fairTag` as a graphile-worker flag (set by the enqueue trigger). Before each fetch the runner
 * asks `forbidden()`: when a principal already holds half of this worker's slots and a job of
 * another principal is among the next few in the queue, that principal's flag is forbidden for
 * this fetch, so the other job is taken instead (graphile-worker skips flagged jobs in its own
 * query). A fetch left empty by the flags (the other job was taken meanwhile) is repeated at
 * once without them, so a principal alone in the queue is never held back and no slot idles.
 * Nor is it looked for before every fetch: a look that found nobody else's job stands for
 * `QUIET_LOOK_MS` (`QuietLook`).
 *
 * A fetch also waits for a free slot. Normally the job that just ended freed one; but a runner
 * that replaced one graphile-worker stopped (another schema's migration notice) starts its
 * workers while the old runner's jobs still hold every slot, and jobs fetched then would wait
 * for a slot in fetch order, ahead of anything enqueued meanwhile, fair share or not.
 */
export class FairFlags {
  readonly #pool: pg.Pool;
  readonly #gate: FairGate;
  readonly #slotFree: () => Promise<void>;
  readonly #peek: string;
  readonly #quiet: QuietLook;
  /** Whether each fetch asked for went with flags, in the order they were asked for. */
  readonly #asked: boolean[] = [];
  readonly #flagged = new Set<string>();
  /** Resolves the fetches asked for, in order, as each one ends. */
  readonly #fetched: (() => void)[] = [];
  #lastFetch: Promise<void> = Promise.resolve();
  #skipOnce = false;

  constructor(
    pool: pg.Pool,
    jobsSchema: string,
    taskIdentifier: string,
    slots: { gate: FairGate; whenFree(): Promise<void> },
    quiet = new QuietLook(),
  ) {
    this.#pool = pool;
    this.#quiet = quiet;
    this.#gate = slots.gate;
    this.#slotFree = () => slots.whenFree();
    const s = quoteIdent(jobsSchema);
    // graphile-worker's own table and index, as its fetch reads them: its public `jobs` view
    // hides `is_available`, so a query on it scans every job instead of the first few.
    const [jobs, tasks] = [quoteIdent('_private_jobs'), quoteIdent('_private_tasks')];
    this.#peek = `SELECT flags FROM ${s}.${jobs} WHERE is_available AND run_at <= now()
        AND task_id = (SELECT id FROM ${s}.${tasks} WHERE identifier = ${literal(taskIdentifier)})
      ORDER BY priority, run_at LIMIT ${peekDepth(slots.gate.slots)}`;
  }

  /**
   * graphile-worker's `forbiddenFlags`: the flags the next fetch skips, or null. Fetches are
   * decided one after another: each waits until the previous one has its job (and the job is
   * counted) or came back empty, so two fetches cannot both pass on the same count.
   */
  readonly forbidden = async (): Promise<string[] | null> => {
    const previous = this.#lastFetch;
    this.#lastFetch = new Promise((resolve) => this.#fetched.push(resolve));
    await waitAtMost(previous, FETCH_PATIENCE_MS);
    await this.#slotFree();
    const flags = this.#skipOnce ? [] : await this.#flagsToSkip();
    this.#skipOnce = false;
    this.#asked.push(flags.length > 0);
    return flags.length > 0 ? flags : null;
  };

  /** Watches one runner's fetches (its `events`), to repeat an empty flagged one. */
  watch(events: WorkerEvents): void {
    // Each fetch asked for ends in one of these; the job of `job:start` is counted by then.
    const ended = () => this.#fetched.shift()?.();
    events.on('worker:getJob:start', ({ worker }) => {
      if (this.#asked.shift() === true) this.#flagged.add(worker.workerId);
      else this.#flagged.delete(worker.workerId);
    });
    events.on('job:start', ended);
    events.on('worker:getJob:error', ended);
    events.on('worker:getJob:empty', ({ worker }) => {
      ended();
      if (!this.#flagged.delete(worker.workerId)) return;
      this.#skipOnce = true;
      worker.nudge(); // graphile-worker fetches again as soon as this event returns
    });
  }

  async #flagsToSkip(): Promise<string[]> {
    const full = this.#gate.fullTags();
    if (full.length === 0 || this.#quiet.foundNobodyLately(full)) return [];
    try {
      const { rows } = await this.#pool.query<{ flags: Record<string, true> | null }>(this.#peek);
      const ahead = rows.map((row) => Object.keys(row.flags ?? {})[0]);
      // Judged against the principals full when the look was asked for, as the look was.
      if (!ahead.some((tag) => tag !== undefined && !full.includes(tag))) {
        this.#quiet.foundNobody(full);
      }
      return this.#gate.tagsToPassOver(ahead);
    } catch {
      return []; // the fetch itself meets the same outage and reports it
    }
  }
}
