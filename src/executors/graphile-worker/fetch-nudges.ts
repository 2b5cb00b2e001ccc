import { performance } from 'node:perf_hooks';
import type { WorkerEvents, WorkerPool } from 'graphile-worker';
import type pg from 'pg';
import { quoteIdent } from '../../stores/postgres/migrations.js';
import { setLongTimeout, type LongTimeout } from '../../task/timers.js';
import { literal } from './enqueue-trigger.js';

/**
 * graphile-worker's own poll, kept only as a safety net for a job that becomes due without any
 * notice (none of taskrail's): every fetch that matters is started by a nudge (see FetchNudges).
 */
export const POLL_INTERVAL_MS = 60_000;
/** A failed fetch is tried again this soon (graphile-worker itself would wait a whole poll). */
const RETRY_MS = 2_000;
/** A nudge comes this long after the job's `run_at`, so the fetch finds it due. */
const WAKE_MARGIN_MS = 20;
/**
 * A timer waits at most this long before the future jobs are read again: over a long wait this
 * host's clock and the database's may drift apart, and a nudge that came early would find
 * nothing due (the job would then wait for the recovery scan).
 */
const RECHECK_MS = 60_000;
/** After the listener (re)connects: its LISTEN is sent right after graphile-worker says so. */
const LISTEN_SETTLE_MS = 200;
/** Wake times kept; past that the latest are dropped and read again from the queue later. */
const MAX_KNOWN = 1000;

/** The payload of the notice a future-dated job sends (see `wakeNotice` in enqueue-trigger.ts). */
interface WakeNotice {
  taskrail?: string;
  inMs?: number;
}

/**
 * Starts graphile-worker's fetches when there is something to fetch, instead of ten workers
 * polling every 2 s at rest. graphile-worker fetches after each job and on its `jobs:insert`
 * NOTIFY (any process's new, resumed, recovered or woken job); what no notice covers is handled
 * here:
 * - a job dated in the future (a sleep, a retry's backoff) becomes due later: its trigger sends
 *   the delay with a notice of its own, and a timer here nudges a worker when it is due, in every
 *   process, so a wake-up is not late even when the process that set the wait is gone;
 * - jobs dated before this runner listened (a restart, a lost LISTEN connection) are read from
 *   the queue when the listener connects, and idle workers are nudged once then;
 * - a fetch that failed (the database is down) is tried again after RETRY_MS, not a whole poll.
 */
export class FetchNudges {
  readonly #pool: pg.Pool;
  readonly #schema: string;
  readonly #futureJobs: string;
  readonly #retries = new Set<NodeJS.Timeout>();
  /** Due times (performance.now()), earliest first. */
  #times: number[] = [];
  /** Times were dropped (MAX_KNOWN): read the queue again when the known ones are done. */
  #more = false;
  /** While the queue is read: the times learned meanwhile (the read replaces the others). */
  #learned: number[] | undefined;
  #timer: LongTimeout | undefined;
  #workers: WorkerPool | undefined;
  #stopped = false;

  constructor(pool: pg.Pool, jobsSchema: string, taskIdentifier: string) {
    this.#pool = pool;
    this.#schema = jobsSchema;
    const s = quoteIdent(jobsSchema);
    this.#futureJobs = `SELECT (extract(epoch FROM run_at - now()) * 1000)::float8 AS in_ms
      FROM ${s}.${quoteIdent('_private_jobs')} WHERE is_available AND run_at > now()
        AND task_id = (SELECT id FROM ${s}.${quoteIdent('_private_tasks')}
          WHERE identifier = ${literal(taskIdentifier)})
      ORDER BY run_at LIMIT ${MAX_KNOWN}`;
  }

  watch(events: WorkerEvents): void {
    events.on('pool:create', ({ workerPool }) => {
      this.#workers = workerPool;
    });
    // A pool shutting down throws on a nudge (its workers are released).
    events.on('pool:gracefulShutdown', () => this.stop());
    events.on('pool:forcefulShutdown', () => this.stop());
    events.on('pool:listen:success', () => this.#later(LISTEN_SETTLE_MS, () => this.#caughtUp()));
    events.on('pool:listen:notification', ({ message }) => {
      if (message.channel !== 'jobs:insert') return;
      const inMs = this.#noticeDelay(message.payload);
      if (inMs !== undefined) this.wakeIn(inMs);
    });
    events.on('worker:getJob:error', ({ worker }) =>
      this.#later(RETRY_MS, () => {
        try {
          worker.nudge();
        } catch {
          // released meanwhile
        }
      }),
    );
  }

  /** A job of this queue is due in `ms` (this process added it without the trigger). */
  wakeIn(ms: number): void {
    if (this.#stopped) return;
    this.#insert(performance.now() + Math.max(0, ms) + WAKE_MARGIN_MS);
    this.#arm();
  }

  stop(): void {
    this.#stopped = true;
    this.#timer?.clear();
    for (const timer of this.#retries) clearTimeout(timer);
    this.#retries.clear();
  }

  #noticeDelay(payload: string | undefined): number | undefined {
    if (payload === undefined || !payload.includes('"taskrail"')) return undefined;
    try {
      const notice = JSON.parse(payload) as WakeNotice;
      return notice.taskrail === this.#schema && typeof notice.inMs === 'number'
        ? notice.inMs
        : undefined;
    } catch {
      return undefined;
    }
  }

  /** Listening (again): whatever was added meanwhile is fetched, future jobs get their timers. */
  #caughtUp(): void {
    this.#nudge(Number.MAX_SAFE_INTEGER);
    this.#readQueue();
  }

  /** Replaces the known times with the queue's future jobs (and those learned meanwhile). */
  #readQueue(): void {
    if (this.#stopped || this.#learned !== undefined) return;
    this.#learned = [];
    this.#timer?.clear();
    this.#timer = undefined;
    this.#pool.query<{ in_ms: number }>(this.#futureJobs).then(
      ({ rows }) => {
        // Counted from the answer: the database read its clock before it sent it, so a timer
        // from here never fires before the job is due.
        const answered = performance.now();
        const learned = this.#learned ?? [];
        this.#learned = undefined;
        this.#times = [];
        this.#more = false;
        for (const { in_ms } of rows) this.#insert(answered + in_ms + WAKE_MARGIN_MS);
        for (const at of learned) this.#insert(at);
        if (rows.length >= MAX_KNOWN) this.#more = true;
        this.#arm();
      },
      () => {
        // The known times stay; a lost listener reads the queue again when it reconnects.
        this.#learned = undefined;
        this.#arm();
      },
    );
  }

  #insert(at: number): void {
    this.#learned?.push(at);
    const times = this.#times;
    let low = 0;
    let high = times.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if ((times[mid] as number) <= at) low = mid + 1;
      else high = mid;
    }
    times.splice(low, 0, at);
    if (times.length > MAX_KNOWN) {
      times.pop();
      this.#more = true;
    }
  }

  #arm(): void {
    this.#timer?.clear();
    this.#timer = undefined;
    if (this.#stopped || this.#learned !== undefined) return;
    const next = this.#times[0];
    if (next === undefined) {
      if (this.#more) this.#readQueue();
      return;
    }
    const wait = next - performance.now();
    this.#timer =
      wait > RECHECK_MS
        ? setLongTimeout(() => this.#readQueue(), RECHECK_MS, true)
        : setLongTimeout(() => this.#fire(), wait, true);
  }

  #fire(): void {
    const now = performance.now();
    let due = 0;
    while (due < this.#times.length && (this.#times[due] as number) <= now) due += 1;
    this.#times.splice(0, Math.max(1, due));
    this.#nudge(Math.max(1, due));
    this.#arm();
  }

  #nudge(workers: number): void {
    if (this.#stopped) return;
    try {
      this.#workers?.nudge(workers);
    } catch {
      // a worker was released meanwhile: the pool is stopping
    }
  }

  #later(ms: number, run: () => void): void {
    if (this.#stopped) return;
    const timer = setTimeout(() => {
      this.#retries.delete(timer);
      if (!this.#stopped) run();
    }, ms);
    timer.unref();
    this.#retries.add(timer);
  }
}
