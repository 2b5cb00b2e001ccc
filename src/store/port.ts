import type { TaskRecord } from '../task/record.js';
import type { TaskStatus } from '../task/status.js';
import type { TaskEvents } from './events.js';
import type { TaskTextKind } from './text-kind.js';

export type { TaskTextKind };

export interface CreateOutcome {
  task: TaskRecord;
  /** False when an earlier task with the same (principal, idempotencyKey) was returned instead. */
  created: boolean;
  /** The lease asked for with `CreateOptions.lease`; only when the task was created. */
  lease?: LeaseGrant;
  /**
   * With `CreateOptions.maxUnfinished`, a created unfinished task's place among its
   * principal's unfinished tasks, itself included.
   */
  position?: number;
}

export interface CreateOptions {
  /**
   * Take the new task's lease in the same write, for a creator that runs it at once: a claim
   * would cost a second write. It counts as a claim: if the holder dies before finishing, the
   * next claim reports `interrupted`. With `permit`, the new lease also asks for that permit
   * in the same write (see `PermitAsk`).
   */
  lease?: { owner: string; leaseMs: number; permit?: PermitAsk };
  /**
   * The per-principal cap (`--max-queued-per-principal`): a create of an unfinished task whose
   * principal already has this many unfinished (`working`, `input_required`) tasks writes
   * nothing and throws TaskrailError `QUEUE_FULL`. Judged in the creating write where the
   * store can, so creates racing at the edge cannot pass it (a Redis Cluster counts across
   * slots before writing: there racing creates can pass it by one each). An earlier task with
   * the same idempotency key is returned whatever the count. An expired task may count until
   * swept.
   */
  maxUnfinished?: number;
}

/**
 * The lease a write is made under. An attempt's writes carry it, so that once another attempt
 * holds the task (a claim after this lease expired, a takeover) they change nothing. Writers
 * that are no attempt (a cancellation, an answer to an input request, an operator) pass none.
 */
export interface WriteFence {
  /** The token of the lease the writing attempt was granted (`LeaseGrant.token`). */
  leaseToken: string;
  /**
   * The permit the attempt holds under that lease: a `compareAndSet` that takes the task out of
   * `working` gives it back in the same write, as `releasePermit` would, and reports the
   * waiters that now fit in `wake`. Other writes ignore it.
   */
  permit?: PermitAsk;
}

export type CompareAndSetOutcome =
  /**
   * `wake`: only when the fence named a permit and this write gave it back: the waiting tasks
   * of its key that now fit under the limit, oldest first (as `releasePermit` returns them).
   */
  | { ok: true; task: TaskRecord; wake?: string[] }
  /** The write lost: the stored revision differs, the stored task is terminal, or it is gone. */
  | { ok: false; fenced?: false; current: TaskRecord | undefined }
  /**
   * A fenced write refused: the task is live and not terminal, but its lease token is no longer
   * the fence's (another attempt claimed it, or the lease was released or dropped by parking).
   * The writer no longer owns the task: it must stop, not re-read and retry.
   */
  | { ok: false; fenced: true; current: TaskRecord };

/** A step save: refused (`fenced`) when its fence's lease no longer holds the task. */
export type SaveStepOutcome = { ok: true } | { ok: false; fenced: true };

export interface LeaseGrant {
  token: string;
  expiresAt: number;
  /** True when the previous holder's lease had expired: its process died mid-run. */
  interrupted: boolean;
  /**
   * With `ClaimOptions.load`, a store that can read the task and its steps in the claiming
   * write returns them here (as `get` and `loadSteps` would have, read under the new lease);
   * a store that cannot leaves it out, and the runner reads them itself.
   */
  loaded?: { task: TaskRecord; steps: Record<string, unknown> };
  /**
   * The answer to the permit asked for with the lease (`CreateOptions.lease.permit`,
   * `ClaimOptions.permit`), as `acquirePermit` gives it; absent when none was asked for, or
   * when a store that asks in a second step could not (the holder then asks itself).
   */
  permit?: PermitOutcome;
}

/**
 * Whether a lease is known to survive the store's failover: `durable` (on every replica, or the
 * store has none a failover could promote), `lost` (the store no longer has it: a replica without
 * it took over), `unconfirmed` (held, but the replicas did not confirm it in time).
 */
export type LeaseDurability = 'durable' | 'lost' | 'unconfirmed';

export interface ReleaseOptions {
  /**
   * The run stopped before its handler finished (a graceful shutdown gave up on it): the lease
   * is kept, expired, so the next claim reports `interrupted`, counts the attempt, and refuses a
   * `retry: false` tool, exactly as after a crash. Default false: a hand-back leaves no trace,
   * but only while the lease is live: releasing a lease that already ran out behaves as
   * abandoned (nobody knows that run ended cleanly, and another process may have seen it lost).
   * A caller whose release, hand-back or outcome write failed with store trouble does not know
   * what the store holds, and must treat the run as abandoned.
   */
  abandoned?: boolean;
}

export interface ClaimOptions {
  /**
   * Take the lease even before it expires when this owner holds it: its holder is known to be
   * gone (a process that no longer exists on this machine). The claim reports `interrupted`.
   */
  takeOverFrom?: string;
  /** The caller will run the task: return it and its steps in `loaded` if that saves reads. */
  load?: boolean;
  /**
   * The concurrency permit the task's attempt needs, when the caller knows its key already (a
   * waiter woken by a release): asked for under the new lease in the claiming write.
   */
  permit?: PermitAsk;
  /**
   * Refuse a lease that ran out but is still on record (a token, expired or abandoned): its
   * holder may be alive and about to renew, as after an outage of the store for everyone. A
   * task nobody holds (new, resumed, or whose durable wait is over) is claimed as usual, and
   * `takeOverFrom` still takes its owner's lease.
   */
  spareExpired?: boolean;
}

/** A working task whose lease is live, and who holds it. */
export interface LeaseHolder {
  id: string;
  owner: string;
}

/** A working task nobody holds, at the revision the scan read. */
export interface RunnableTask {
  id: string;
  revision: number;
}

export interface LeaseRenewal {
  /** False when the lease was lost (expired and taken over, or released). */
  held: boolean;
  /** The task's current status, so a holder in another process notices a cancellation. */
  status: TaskStatus | undefined;
}

/**
 * An attempt's request for a concurrency permit (a tool's `concurrency` option): at most
 * `limit` attempts with the same `key` hold one at once, across every process on the store.
 */
export interface PermitRequest {
  /** The concurrency key, as stored with the task at creation. */
  key: string;
  limit: number;
  taskId: string;
  /** The lease the attempt holds: the permit lives exactly as long as that lease. */
  token: string;
  /** The task's creation time: waiters get permits in this order (then by id). */
  createdAt: number;
  /**
   * On refusal, give the lease back in the same write (as `releaseLease` while it is live):
   * the task waits without a lease, so the wake that follows a release can claim it.
   */
  releaseOnRefusal?: boolean;
}

/**
 * A permit asked for in the write that takes a lease (a create that leases its task, a claim):
 * exactly `acquirePermit` with the new lease's token and the task's creation time, without
 * `releaseOnRefusal` (a refused task is recorded as waiting and keeps its lease), so a task
 * whose permit is free costs no write of its own for it.
 */
export interface PermitAsk {
  key: string;
  limit: number;
}

export interface PermitOutcome {
  granted: boolean;
  /**
   * Waiting tasks of this key that now fit under the limit: run them. Not the requester, unless
   * its lease was given back on refusal (then it waits like any other).
   */
  wake: string[];
}

export interface AppendTextOptions {
  /** The writing attempt's lease: the append lands only while it still holds the task. */
  fence?: WriteFence;
  /**
   * Keep at most this many characters of the text: after the append the oldest chunks give way
   * whole, and `dropped` says where the kept part starts. Default: keep everything.
   */
  maxChars?: number;
}

export type AppendTextOutcome =
  /** `end`: the text's length after the append; `dropped`: characters dropped from its front. */
  { ok: true; end: number; dropped: number } | { ok: false; fenced: true };

/** One stored piece of a text: `start` counts UTF-16 code units from the text's beginning. */
export interface TextChunk {
  start: number;
  text: string;
}

export interface StoredText {
  /** The kept chunks that overlap the range read (see `readText`), in order. */
  chunks: TextChunk[];
  /** The text's length so far in UTF-16 code units, the dropped front included. */
  end: number;
  /** Characters dropped from the front (offsets still count them). */
  dropped: number;
}

export interface ListQuery {
  principal?: string;
  statuses?: readonly TaskStatus[];
  tool?: string;
  /** Opaque cursor from a previous page. */
  cursor?: string;
  /** Page size; stores cap it at 1000. */
  limit?: number;
}

export interface ListPage {
  tasks: TaskRecord[];
  nextCursor?: string;
}

/**
 * The one seam between taskrail and a database. Every adapter passes the contract suite in
 * `taskrail/testing`. Rules every adapter keeps:
 * - `create` has committed when its promise resolves (a `get` anywhere then finds the task).
 * - `compareAndSet` writes only when the stored revision equals `expectedRevision` and the
 *   stored task is not terminal; `next.revision` must be `expectedRevision + 1`. The fields
 *   fixed at creation (id, principal, tool, arguments, createdAt, wire, idempotencyKey)
 *   keep their stored values whatever `next` says.
 * - A fenced write (`compareAndSet` or `saveStep` with a `WriteFence`) also requires, in the
 *   same atomic step, that the task's stored lease token equals the fence's; otherwise it
 *   changes nothing and reports `fenced`. The fence is the token, not the clock: a lease that
 *   expired but that nobody has claimed since still admits its holder's writes (no other
 *   attempt has run; the runner stops writing on its own once it cannot renew). A claim,
 *   a release or a write that leaves `working` ends the token, and with it the old writes.
 * - Expired tasks (`expiresAt <= now`) are reported as absent by `get`, whether swept or not.
 * - A lease exists only for a `working` task; `claim` succeeds when there is no lease or the
 *   lease expired, and says which (`interrupted`).
 * - Every lost lease is an interruption: a claim after a lease ran out reports `interrupted`,
 *   whether or not its holder then released it; only a release made while the lease was
 *   live (judged on the store's clock) leaves no trace.
 */
export interface TaskStore {
  /** A short description for logs, never containing secrets. */
  readonly description: string;
  readonly events: TaskEvents;

  create(task: TaskRecord, options?: CreateOptions): Promise<CreateOutcome>;
  get(id: string): Promise<TaskRecord | undefined>;
  compareAndSet(
    next: TaskRecord,
    expectedRevision: number,
    fence?: WriteFence,
  ): Promise<CompareAndSetOutcome>;

  claim(
    id: string,
    owner: string,
    leaseMs: number,
    options?: ClaimOptions,
  ): Promise<LeaseGrant | undefined>;
  renewLease(id: string, token: string, leaseMs: number): Promise<LeaseRenewal>;
  releaseLease(id: string, token: string, options?: ReleaseOptions): Promise<void>;
  /**
   * Gives the lease back for a durable wait (a retry's backoff, `ctx.sleep`): the task stays
   * `working`, but `claim` refuses it and `findRunnable` skips it until the store's own clock
   * reaches now + `delayMs`; `findLeased` does not list it (nobody holds it). The claim after
   * the wait is not an interruption. Resolves the wake time on the store's clock, or undefined
   * when `token` no longer holds a live lease (nothing changed: a lease that ran out stays as
   * the evidence of an interruption).
   */
  releaseUntil(id: string, token: string, delayMs: number): Promise<number | undefined>;
  /**
   * Optional, for a store that wakes durable waits itself (SQLite, whose executor has no
   * delayed jobs): calls `onDue` with each task whose `releaseUntil` wait is over, at its wake
   * time on the store's clock, including waits set before this process opened the store. A
   * call may repeat a task; `findRunnable` stays the safety net. Returns the function that stops
   * it. Without it the runtime keeps a timer per wait it set, and after a restart the recovery
   * scan finds due waits (up to a lease later).
   */
  onWaitsDue?(onDue: (taskId: string) => void): () => void;
  /**
   * Optional, for a store whose acknowledged writes a failover can lose (Redis Cluster:
   * asynchronous replication). The runner asks before a `retry: false` tool starts and runs it
   * only when `durable`; a store without it is taken as durable.
   */
  confirmLease?(id: string, token: string): Promise<LeaseDurability>;
  /**
   * Takes a permit of `request.key` for the attempt holding lease `request.token` of the task,
   * when fewer than `limit` live permits of the key are held and no waiting task of the key
   * created earlier is still waiting for one; otherwise records the task as waiting (in
   * creation order) and refuses. A permit is live while its lease is (the task's lease token is
   * still the permit's and has not expired on the store's clock): every write that ends the
   * lease (an outcome, parking, `releaseUntil`, a release, a claim after expiry) ends the
   * permit with it, and a crashed holder's permit is freed by its lease running out. A waiter
   * stops counting once its task is no longer `working`. Asking again under the same lease
   * returns the permit already held. A token that holds no live lease is refused.
   */
  acquirePermit(request: PermitRequest): Promise<PermitOutcome>;
  /**
   * Gives back the permit of `key` held under lease `token` of the task (no-op when none is),
   * and returns the waiting tasks of the key that now fit under `limit`, oldest first.
   */
  releasePermit(key: string, limit: number, taskId: string, token: string): Promise<string[]>;
  /**
   * Working tasks nobody holds: new, resumed after input, whose holder's lease expired, or
   * whose `releaseUntil` wait is over.
   */
  findRunnable(limit: number): Promise<string[]>;
  /**
   * Optional: `findRunnable` with each task's revision, for an executor that deduplicates jobs
   * by revision and would otherwise read every task back (a round trip per queued task).
   */
  findRunnableTasks?(limit: number): Promise<RunnableTask[]>;
  /** Up to `limit` working tasks whose lease is live, with their holders (in no set order). */
  findLeased(limit: number): Promise<LeaseHolder[]>;

  /** Rejects with `TASK_NOT_FOUND` when the task is absent or expired. */
  saveStep(id: string, name: string, value: unknown, fence?: WriteFence): Promise<SaveStepOutcome>;
  loadSteps(id: string): Promise<Record<string, unknown>>;

  /**
   * Appends one chunk (at most `TEXT_CHUNK_CHARS` UTF-16 code units; `splitText` cuts longer
   * text) to a task's text of that kind. Rejects with `TASK_NOT_FOUND` when the task is absent
   * or expired; a fenced append whose lease no longer holds the task reports `fenced`.
   */
  appendText(
    id: string,
    kind: TaskTextKind,
    chunk: string,
    options?: AppendTextOptions,
  ): Promise<AppendTextOutcome>;
  /**
   * The kept chunks of the task's text that overlap `[from, from + length)`, where `from` is
   * `offset` moved up to the dropped front if it lies before it; with the text's length.
   * Undefined when the task is absent or expired; a text never written reads as empty.
   */
  readText(
    id: string,
    kind: TaskTextKind,
    offset: number,
    length: number,
  ): Promise<StoredText | undefined>;

  list(query: ListQuery): Promise<ListPage>;
  /**
   * Optional: how many unfinished (`working` or `input_required`) tasks `principal` has, up to
   * `atMost` (a larger count is reported as `atMost`); an expired task may count until swept.
   * Cheap (a count kept in the writes, or a counted read on an index): the per-principal cap
   * on creates reads it on every create.
   */
  countUnfinished?(principal: string, atMost: number): Promise<number>;
  /** Deletes up to `limit` expired tasks with their steps, texts and leases; returns their ids. */
  sweepExpired(limit: number): Promise<string[]>;

  close(): Promise<void>;
}
