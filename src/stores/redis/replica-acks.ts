import { setTimeout as sleep } from 'node:timers/promises';
import { Cluster, type ChainableCommander } from 'ioredis';
import type { LeaseDurability as Durability } from '../../store/port.js';
import { readLua, type RedisClient } from './scripts.js';

/** One field of a task hash as the confirmed write left it: present means the write is. */
export interface FieldCheck {
  key: string;
  field: string;
  value: string;
}

/** How long one WAIT may block. A replica on the same network answers in well under 1 ms. */
const WAIT_MS = 500;
const RETRY_DELAY_MS = 200;
/**
 * A round slower than this was held up by its master (frozen, or failing over), not by the
 * replicas: WAIT returns within WAIT_MS.
 */
const STALLED_MS = WAIT_MS + 1_000;
/** However often the master stalls, a write is answered within its budget plus this. */
const MAX_STALL_MS = 60_000;
/** Replies after which the slot map is stale: ask again, on the master the cluster names now. */
const REDIRECTED = /^(MOVED|ASK|TRYAGAIN|CLUSTERDOWN|READONLY|UNBLOCKED)\b/;

/** ioredis refuses a pipeline whose keys the slot map no longer puts on one node. */
const SPLIT = /same slots allocation group|should belong to the same slot/;

type PipelineReply = Array<[Error | null, unknown]>;
type Write = (pipeline: ChainableCommander) => void;

interface Entry {
  check: FieldCheck;
  write: Write | undefined;
  resolve: (round: Round) => void;
  reject: (error: unknown) => void;
}

interface Batch {
  bucket: number;
  entries: Entry[];
}

interface Round {
  /** The write's own reply, when the round carried one. */
  written?: unknown;
  /** 1 present, 0 absent, undefined: the node could not say (redirected; ask again). */
  present: number | undefined;
  acked: number;
  /** The replicas the slot map listed when the round was sent, and the node it went to. */
  asked: number;
  node: string;
}

/**
 * Redis replicates asynchronously: a master acknowledges a write before its replicas have it,
 * and a master that stalls (or crashes) and is replaced by a replica loses it, even though
 * the client saw it succeed. On a Cluster, the writes that must survive such a failover (a
 * create; the claim of a `retry: false` task, before its tool starts) go out pipelined with a
 * field check and `WAIT <replicas> <ms>` on the same connection, so the answer says whether
 * every replica the cluster lists for the slot has them; concurrent ones to the same master
 * share one pipeline and one WAIT. On a single Redis (no replicas known to the client) nothing
 * is added: `needed` is false and writes go out as before.
 */
export class ReplicaAcks {
  readonly #redis: RedisClient;
  readonly #slotOfBucket = new Map<number, number>();
  readonly #confirmLua = readLua('confirm-field');
  /** Batches still collecting entries, by the node they go to. */
  readonly #open = new Map<string, Batch>();

  constructor(redis: RedisClient) {
    this.#redis = redis;
  }

  /** True on a Cluster, whose slot maps list replicas a failover can promote. */
  get needed(): boolean {
    return this.#redis instanceof Cluster;
  }

  /**
   * Runs `write` (one script on the hash `check.key` that leaves `check`'s field as given) with
   * a confirmation in the same round trip; until the replicas have it, confirms again, and
   * writes again when it was lost. Resolves with the first reply of `write`; a reply that
   * `refused` says wrote nothing (the id is taken) is returned at once.
   */
  async write(
    bucket: number,
    write: Write,
    check: FieldCheck,
    options: { budgetMs: number; refused: (reply: unknown) => boolean },
  ): Promise<{ written: unknown; durability: Durability }> {
    const deadline = new Deadline(options.budgetMs);
    let written: unknown;
    let rewrite = true;
    for (;;) {
      const round = await deadline.round(() =>
        this.#round(bucket, check, rewrite ? write : undefined),
      );
      if (written === undefined && round.written !== undefined) {
        written = round.written;
        if (options.refused(written)) return { written, durability: 'durable' };
      }
      const verdict = this.#verdict(bucket, round);
      if (verdict === 'durable' && written !== undefined) return { written, durability: verdict };
      this.#refreshSlots();
      if (deadline.passed()) {
        return { written, durability: verdict === 'lost' ? 'lost' : 'unconfirmed' };
      }
      rewrite = written === undefined || verdict === 'lost';
      await sleep(RETRY_DELAY_MS);
    }
  }

  /** Confirms a write made earlier on this store's connection (see `write`). */
  async confirm(bucket: number, check: FieldCheck, budgetMs: number): Promise<Durability> {
    const deadline = new Deadline(budgetMs);
    for (;;) {
      const round = await deadline.round(() => this.#round(bucket, check, undefined));
      const done = this.#verdict(bucket, round);
      if (done === 'durable' || done === 'lost') return done;
      this.#refreshSlots();
      if (deadline.passed()) return 'unconfirmed';
      await sleep(RETRY_DELAY_MS);
    }
  }

  /**
   * Judged against what the round asked of the node it went to. A node the slot map no longer
   * names as the master (replaced while it stalled) says nothing; nor do fewer replicas listed
   * now: a failed-over slot lists none until its old master rejoins as a replica.
   */
  #verdict(bucket: number, round: Round): Durability | 'retry' {
    if (round.node !== this.#nodeOf(bucket)) return 'retry';
    if (round.present === 0) return 'lost';
    if (round.present === 1 && round.acked >= round.asked) return 'durable';
    return 'retry';
  }

  /**
   * Queues one entry (an optional write and its field check) for the next batch to the node
   * serving the bucket's slot. Concurrent entries share one pipeline and one WAIT, which covers
   * every write before it on the connection: a group commit, as the replicas see it.
   */
  #round(bucket: number, check: FieldCheck, write: Write | undefined): Promise<Round> {
    const node = this.#nodeOf(bucket);
    return new Promise((resolve, reject) => {
      let batch = this.#open.get(node);
      if (batch === undefined) {
        const opened: Batch = { bucket, entries: [] };
        this.#open.set(node, opened);
        setImmediate(() => void this.#flush(node, opened));
        batch = opened;
      }
      batch.entries.push({ check, write, resolve, reject });
    });
  }

  async #flush(node: string, batch: Batch): Promise<void> {
    this.#open.delete(node);
    const pipeline = this.#redis.pipeline();
    for (const { write, check } of batch.entries) {
      write?.(pipeline);
      pipeline.eval(this.#confirmLua, 1, check.key, check.field, check.value);
    }
    const sent = { asked: this.replicasOf(batch.bucket), node };
    pipeline.wait(sent.asked, WAIT_MS);
    let replies: PipelineReply;
    try {
      replies = ((await pipeline.exec()) ?? []) as PipelineReply;
    } catch (error) {
      // The slot map changed under the batch (its keys no longer share a node): ask again.
      const split = error instanceof Error && SPLIT.test(error.message);
      for (const entry of batch.entries) {
        if (split) entry.resolve({ present: undefined, acked: 0, ...sent });
        else entry.reject(error);
      }
      return;
    }
    const [waitError, acked] = replies.at(-1) ?? [null, 0];
    let at = 0;
    for (const entry of batch.entries) {
      const written = entry.write === undefined ? undefined : replies[at++];
      const checked = replies[at++] as [Error | null, unknown];
      try {
        const round = roundOf(written, checked, waitError === null ? Number(acked) : 0);
        entry.resolve({ ...round, ...sent });
      } catch (error) {
        entry.reject(error);
      }
    }
  }

  /** The master the client's slot map names for the bucket ('' before the map is known). */
  #nodeOf(bucket: number): string {
    if (!(this.#redis instanceof Cluster)) return '';
    return this.#redis.slots[this.#slot(bucket)]?.[0] ?? '';
  }

  /** Replicas the client's slot map lists for the bucket's slot (CLUSTER SLOTS omits failed ones). */
  replicasOf(bucket: number): number {
    if (!(this.#redis instanceof Cluster)) return 0;
    const nodes = this.#redis.slots[this.#slot(bucket)];
    return nodes === undefined ? 0 : Math.max(0, nodes.length - 1);
  }

  /** A shortfall may mean a failover moved the slot or a replica failed: re-read the map. */
  #refreshSlots(): void {
    if (this.#redis instanceof Cluster) this.#redis.refreshSlotsCache();
  }

  #slot(bucket: number): number {
    let slot = this.#slotOfBucket.get(bucket);
    if (slot === undefined) {
      slot = crc16(String(bucket)) % 16384;
      this.#slotOfBucket.set(bucket, slot);
    }
    return slot;
  }
}

/**
 * The replicas' budget, not counting time the master spent stalled. A master that answers only
 * after a stall may have been replaced meanwhile: it still has the write and no replica
 * acknowledges it, but it drops the write when it rejoins as a replica. Its answer is no
 * verdict, so the replicas get their whole budget again from then, for rounds sent where the
 * refreshed slot map points (there the write is found, or found lost and written again).
 */
class Deadline {
  readonly #budgetMs: number;
  readonly #cap: number;
  #at: number;

  constructor(budgetMs: number) {
    this.#budgetMs = budgetMs;
    this.#at = Date.now() + budgetMs;
    this.#cap = this.#at + MAX_STALL_MS;
  }

  async round<T>(send: () => Promise<T>): Promise<T> {
    const sent = Date.now();
    const round = await send();
    const now = Date.now();
    if (now - sent > STALLED_MS)
      this.#at = Math.min(this.#cap, Math.max(this.#at, now + this.#budgetMs));
    return round;
  }

  passed(): boolean {
    return Date.now() + RETRY_DELAY_MS > this.#at;
  }
}

function roundOf(
  written: [Error | null, unknown] | undefined,
  checked: [Error | null, unknown],
  acked: number,
): Omit<Round, 'asked' | 'node'> {
  throwUnlessRedirected(checked[0]);
  const present = checked[0] === null ? Number(checked[1]) : undefined;
  const round: Omit<Round, 'asked' | 'node'> = { present, acked };
  if (written !== undefined) {
    throwUnlessRedirected(written[0]);
    if (written[0] === null) round.written = written[1];
  }
  return round;
}

function throwUnlessRedirected(error: Error | null): void {
  if (error !== null && !REDIRECTED.test(error.message)) throw error;
}

/** CRC16-XMODEM of a hash tag, as Redis Cluster maps keys to slots. */
function crc16(text: string): number {
  let crc = 0;
  for (const byte of Buffer.from(text, 'utf8')) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
  }
  return crc;
}
