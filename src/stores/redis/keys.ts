import type { TaskTextKind } from '../../store/port.js';

const TEXT_KINDS: readonly TaskTextKind[] = ['output', 'result', 'structured'];

/**
 * The key layout under a prefix P. Tasks are spread over buckets (1 on a single Redis, 16 on a
 * Cluster) by a hash of their id; every key of a task and every index of its bucket carries the
 * hash tag `{b}`, so each Lua script touches one Cluster slot.
 * - `P:{b}:task:<id>`      hash: `fixed` (JSON of the fields set at creation), `data` (JSON of
 *                          the rest), `revision`, `status`, `expiresAt` ('' = never), `member`,
 *                          `pindex`, `idem`, and while leased `leaseToken`, `leaseOwner`,
 *                          `leaseExpiresAt`
 * - `P:{b}:steps:<id>`     hash: step name → JSON value
 * - `P:{b}:text:<id>:<kind>`     hash: `end`, `dropped`, and chunk start → chunk text
 * - `P:{b}:textidx:<id>:<kind>`  sorted set of the chunk starts (member = score = start)
 * - `P:{b}:idem:<principal>:<key>`  string `<task id> <reserved at>`; b from principal and key
 * - `P:{b}:created`        sorted set, all scores 0, member `<createdAt 15 digits>:<id>` (lex)
 * - `P:{b}:principal:<principal>`   the same, per principal
 * - `P:{b}:unfinished:<principal>` sorted set: the principal's unfinished tasks of the bucket,
 *                          member as above, score = expiresAt (+inf = never)
 * - `P:{b}:working`        sorted set: member as above, score = lease expiry (0 = not leased)
 * - `P:{b}:expiry`         sorted set: member as above, score = expiresAt
 * - `P:{0}:permits:<key>`  hash: task id → lease token, the holders of a concurrency key
 * - `P:{0}:waiters:<key>`  sorted set, all scores 0, member as above: the key's waiters
 * - on a Cluster, per concurrency key in the key's own slot (see cluster-permit.lua):
 *   `P:{permit:<key>}:holders` (sorted set, task id scored by its lease's expiry),
 *   `…:tokens` (hash: task id → lease token) and `…:waiters` (as the waiters above)
 * - `P:events`             pub/sub channel
 */
export class RedisKeys {
  constructor(
    readonly prefix: string,
    readonly buckets: number,
  ) {}

  /** Every bucket number, for the readers that look across all tasks. */
  get allBuckets(): number[] {
    return Array.from({ length: this.buckets }, (_, i) => i);
  }
  bucketOf(text: string): number {
    return this.buckets === 1 ? 0 : fnv1a(text) % this.buckets;
  }
  task(id: string): string {
    return `${this.#tagged(this.bucketOf(id))}task:${id}`;
  }
  steps(id: string): string {
    return `${this.#tagged(this.bucketOf(id))}steps:${id}`;
  }
  text(id: string, kind: TaskTextKind): string {
    return `${this.#tagged(this.bucketOf(id))}text:${id}:${kind}`;
  }
  textIndex(id: string, kind: TaskTextKind): string {
    return `${this.#tagged(this.bucketOf(id))}textidx:${id}:${kind}`;
  }
  /** The six text keys of a task, for the sweeper (sweep-task.lua counts on six). */
  texts(id: string): string[] {
    return TEXT_KINDS.flatMap((kind) => [this.text(id, kind), this.textIndex(id, kind)]);
  }
  idempotency(principal: string, key: string): string {
    const name = `${encodeURIComponent(principal)}:${encodeURIComponent(key)}`;
    return `${this.#tagged(this.bucketOf(name))}idem:${name}`;
  }
  principal(bucket: number, principal: string): string {
    return `${this.#tagged(bucket)}principal:${encodeURIComponent(principal)}`;
  }
  unfinished(bucket: number, principal: string): string {
    return `${this.#tagged(bucket)}unfinished:${encodeURIComponent(principal)}`;
  }
  created(bucket: number): string {
    return `${this.#tagged(bucket)}created`;
  }
  working(bucket: number): string {
    return `${this.#tagged(bucket)}working`;
  }
  expiry(bucket: number): string {
    return `${this.#tagged(bucket)}expiry`;
  }
  permits(key: string): string {
    return `${this.#tagged(0)}permits:${encodeURIComponent(key)}`;
  }
  permitWaiters(key: string): string {
    return `${this.#tagged(0)}waiters:${encodeURIComponent(key)}`;
  }
  /** A concurrency key's holders, their tokens and its waiters, in the key's own slot. */
  clusterPermits(key: string): [holders: string, tokens: string, waiters: string] {
    const tagged = `${this.prefix}:{permit:${encodeURIComponent(key)}}:`;
    return [`${tagged}holders`, `${tagged}tokens`, `${tagged}waiters`];
  }
  get channel(): string {
    return `${this.prefix}:events`;
  }
  #tagged(bucket: number): string {
    return `${this.prefix}:{${bucket}}:`;
  }
}

/** 32-bit FNV-1a over UTF-16 code units: cheap, stable across processes and versions. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** Index member: sorts by creation time, then id, as plain strings. */
export function indexMember(createdAt: number, id: string): string {
  return `${String(Math.max(0, Math.floor(createdAt))).padStart(15, '0')}:${id}`;
}

export function memberId(member: string): string {
  return member.slice(member.indexOf(':') + 1);
}

export function memberCreatedAt(member: string): number {
  return Number(member.slice(0, member.indexOf(':')));
}
