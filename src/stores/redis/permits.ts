import type { PermitOutcome, PermitRequest } from '../../store/port.js';
import { TaskrailError } from '../../task/errors.js';
import { assertPermitLimit, assertPermitRequest } from '../shared/permits.js';
import { indexMember, memberId, RedisKeys } from './keys.js';
import type { RedisClient, RedisScripts } from './scripts.js';

/** Reads that lost a race with another writer of the same key before the script ran. */
const MAX_ROUNDS = 20;

export interface RedisPermitParts {
  redis: RedisClient;
  scripts: RedisScripts;
  /** The store's key prefix and bucket count. */
  prefix: string;
  buckets: number;
  /** The task-expiry clock (the store's clock). */
  now: () => number;
  /** The lease clock passed to scripts ('' = Redis TIME). */
  leaseNow: () => number | '';
}

type Reply = string[];

/**
 * The Redis store's permits: per key a hash of holders (task id → lease token) and a sorted
 * set of waiters. The scripts judge each holder by its task's lease, so every key a script
 * touches is listed: the caller reads holders and waiters, then the script checks they did
 * not change (else reads again). That needs every task hash in one slot: a single Redis (one
 * bucket). A Redis Cluster keeps its permits with ClusterPermits.
 */
export class RedisPermits {
  readonly #keys: RedisKeys;

  constructor(private readonly parts: RedisPermitParts) {
    this.#keys = new RedisKeys(parts.prefix, parts.buckets);
  }

  async acquire(request: PermitRequest): Promise<PermitOutcome> {
    assertPermitRequest(request);
    const member = indexMember(request.createdAt, request.taskId);
    const extra = [request.releaseOnRefusal === true ? '1' : ''];
    const reply = await this.#run('acquire-permit', request, member, extra);
    return { granted: reply[0] === '1', wake: reply.slice(1).map(memberId) };
  }

  async release(key: string, limit: number, taskId: string, token: string): Promise<string[]> {
    assertPermitLimit(limit);
    const request = { key, limit, taskId, token, createdAt: 0 };
    const reply = await this.#run('release-permit', request, '', ['']);
    return reply.slice(1).map(memberId);
  }

  async #run(
    script: 'acquire-permit' | 'release-permit',
    request: PermitRequest,
    member: string,
    extra: string[],
  ): Promise<Reply> {
    const { redis, scripts } = this.parts;
    const keys = this.#keys;
    const permits = keys.permits(request.key);
    const waiters = keys.permitWaiters(request.key);
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const [holders, queued] = await Promise.all([
        redis.hkeys(permits),
        redis.zrange(waiters, 0, -1),
      ]);
      const reply = (await scripts.run(
        script,
        [
          permits,
          waiters,
          keys.task(request.taskId),
          keys.working(0),
          ...holders.map((id) => keys.task(id)),
          ...queued.map((queuedMember) => keys.task(memberId(queuedMember))),
        ],
        [
          request.taskId,
          request.token,
          request.limit,
          member,
          ...extra,
          this.parts.now(),
          this.parts.leaseNow(),
          holders.length,
          ...holders,
          ...queued,
        ],
      )) as Reply;
      if (reply[0] !== 'retry') return reply;
    }
    throw new TaskrailError(
      'STORE_UNAVAILABLE',
      `redis permits of key ${request.key}: gave up after ${MAX_ROUNDS} racing rounds`,
    );
  }
}
