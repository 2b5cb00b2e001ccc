/**
 * The key layout under a prefix P (all strings):
 * - `P:task:<id>`       hash: `fixed` (JSON of the fields set at creation), `data` (JSON of the
 *                       rest), `revision`, `status`, `expiresAt` ('' = never), `member`,
 *                       `pindex`, `idem`, and while leased `leaseToken`, `leaseOwner`, `leaseExpiresAt`
 * - `P:steps:<id>`      hash: step name → JSON value
 * - `P:idem:<principal>:<key>`  string: task id (URI-encoded parts)
 * - `P:created`         sorted set, all scores 0, member `<createdAt 15 digits>:<id>` (lex order)
 * - `P:principal:<principal>`   the same, per principal
 * - `P:working`         sorted set: member as above, score = lease expiry (0 = not leased)
 * - `P:expiry`          sorted set: member as above, score = expiresAt
 * - `P:events`          pub/sub channel
 */
export class RedisKeys {
  constructor(readonly prefix: string) {}

  get base(): string {
    return `${this.prefix}:`;
  }
  task(id: string): string {
    return `${this.prefix}:task:${id}`;
  }
  steps(id: string): string {
    return `${this.prefix}:steps:${id}`;
  }
  idempotency(principal: string, key: string): string {
    return `${this.prefix}:idem:${encodeURIComponent(principal)}:${encodeURIComponent(key)}`;
  }
  principal(principal: string): string {
    return `${this.prefix}:principal:${encodeURIComponent(principal)}`;
  }
  get created(): string {
    return `${this.prefix}:created`;
  }
  get working(): string {
    return `${this.prefix}:working`;
  }
  get expiry(): string {
    return `${this.prefix}:expiry`;
  }
  get channel(): string {
    return `${this.prefix}:events`;
  }
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
