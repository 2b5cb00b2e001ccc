import type { PermitOutcome, PermitRequest } from '../../store/port.js';
import { assertPermitLimit, assertPermitRequest } from '../shared/permits.js';
import { indexMember, memberId, RedisKeys } from './keys.js';
import type { RedisPermitParts } from './permits.js';
import { isLive } from './scans.js';

/** Rounds of "these waiters were dead: drop them and decide again" before answering anyway. */
const MAX_ROUNDS = 20;

type Mode = 'acquire' | 'release' | 'renew';
type Reply = string[];

/** A permit this store granted, kept to refresh it with its lease and end it with the lease. */
interface HeldHere {
  key: string;
  limit: number;
  token: string;
}

/**
 * Permits on a Redis Cluster. A key's holders, tokens and waiters share the key's own slot
 * (cluster-permit.lua); the holders' leases sit in other slots, so each holder carries its
 * lease's expiry, refreshed when this store renews the lease and dropped when this store ends
 * it (an outcome, a durable wait, a hand-back). A holder whose process died frees its permit
 * when that expiry passes, judged on the Redis clock like the lease. The asker's lease and the
 * waiters' tasks are read from their own slots around the script.
 */
export class ClusterPermits {
  readonly #keys: RedisKeys;
  readonly #heldHere = new Map<string, HeldHere>();

  constructor(private readonly parts: RedisPermitParts) {
    this.#keys = new RedisKeys(parts.prefix, parts.buckets);
  }

  async acquire(request: PermitRequest): Promise<PermitOutcome> {
    assertPermitRequest(request);
    const { taskId, token } = request;
    const leftMs = await this.#leaseLeft(taskId, token);
    if (leftMs <= 0) return { granted: false, wake: [] };
    const member = indexMember(request.createdAt, taskId);
    const reply = await this.#decide('acquire', request, member, leftMs);
    const granted = reply[0] === '1';
    const wake = reply.slice(1).map(memberId);
    if (granted) this.#heldHere.set(taskId, { key: request.key, limit: request.limit, token });
    else if (request.releaseOnRefusal === true) {
      await this.#giveLeaseBack(taskId, token);
      wake.push(...(await this.#fitNowAfterHandBack(request, wake)));
    }
    return { granted, wake };
  }

  /**
   * The lease goes back in a write of its own (the task's slot), so a release between the two
   * writes could wake this waiter while it still held its lease, and the wake would be lost:
   * asked again, the waiters that fit now, this one included, are named to be run.
   */
  async #fitNowAfterHandBack(request: PermitRequest, named: string[]): Promise<string[]> {
    const { key, limit } = request;
    const reply = await this.#decide('release', { key, limit, taskId: '', token: '' }, '', 0);
    return reply
      .slice(1)
      .map(memberId)
      .filter((id) => !named.includes(id));
  }

  async release(key: string, limit: number, taskId: string, token: string): Promise<string[]> {
    assertPermitLimit(limit);
    if (this.#heldHere.get(taskId)?.token === token) this.#heldHere.delete(taskId);
    const reply = await this.#decide('release', { key, limit, taskId, token }, '', 0);
    return reply.slice(1).map(memberId);
  }

  /** The lease was renewed for `leaseMs`: the permit held under it lives as long. */
  async leaseRenewed(taskId: string, token: string, leaseMs: number): Promise<void> {
    const held = this.#heldHere.get(taskId);
    if (held?.token !== token) return;
    const reply = await this.#decide('renew', { ...held, taskId }, '', leaseMs);
    if (reply[0] !== '1') this.#heldHere.delete(taskId);
  }

  /**
   * The task's lease ended through this store (with `token`, or whichever it held): so does
   * its permit. Best effort: a permit left behind runs out with the lease's last expiry.
   */
  async leaseEnded(taskId: string, token?: string): Promise<void> {
    const held = this.#heldHere.get(taskId);
    if (held === undefined || (token !== undefined && held.token !== token)) return;
    await this.release(held.key, held.limit, taskId, held.token).catch(() => undefined);
  }

  /**
   * Runs the key's script until every waiter it named is still waiting: the dead ones (not
   * working, or expired) go back to it to be dropped. After MAX_ROUNDS the live ones are named.
   */
  async #decide(
    mode: Mode,
    request: Omit<PermitRequest, 'createdAt'>,
    member: string,
    leftMs: number,
  ): Promise<Reply> {
    const { scripts } = this.parts;
    const keys = this.#keys.clusterPermits(request.key);
    const { taskId, token, limit } = request;
    const args = [mode, taskId, token, limit, member, Math.ceil(leftMs), this.parts.leaseNow()];
    let dead: string[] = [];
    for (let round = 0; ; round++) {
      const reply = (await scripts.run('cluster-permit', keys, [...args, ...dead])) as Reply;
      const [verdict, ...named] = reply;
      dead = await this.#deadWaiters(named);
      if (dead.length === 0) return reply;
      if (round + 1 === MAX_ROUNDS) {
        return [verdict as string, ...named.filter((waiter) => !dead.includes(waiter))];
      }
    }
  }

  async #deadWaiters(members: readonly string[]): Promise<string[]> {
    const now = this.parts.now();
    const rows = await Promise.all(
      members.map((waiter) =>
        this.parts.redis.hmget(this.#keys.task(memberId(waiter)), 'status', 'expiresAt'),
      ),
    );
    return members.filter((_waiter, i) => {
      const [status, expiresAt] = rows[i] ?? [];
      return !(status === 'working' && isLive(expiresAt, now));
    });
  }

  async #leaseLeft(taskId: string, token: string): Promise<number> {
    const left = await this.parts.scripts.run(
      'lease-left',
      [this.#keys.task(taskId)],
      [token, this.parts.leaseNow()],
    );
    return Number(left);
  }

  async #giveLeaseBack(taskId: string, token: string): Promise<void> {
    const keys = this.#keys;
    const leaseKeys = [keys.task(taskId), keys.working(keys.bucketOf(taskId))];
    await this.parts.scripts.run('release-lease', leaseKeys, [token, '0', this.parts.leaseNow()]);
  }
}
