import type {
  ClaimOptions,
  LeaseDurability,
  LeaseGrant,
  LeaseRenewal,
  ReleaseOptions,
} from '../../store/port.js';
import { newToken } from '../../task/ids.js';
import type { TaskRecord } from '../../task/record.js';
import { isTaskStatus } from '../../task/status.js';
import type { Clock } from '../../task/time.js';
import { assertDelayMs, assertLeaseMs } from '../shared/checks.js';
import { grantWithPermit, type PermitSteps } from '../shared/permits.js';
import type { ClusterPermits } from './cluster-permits.js';
import { decodeRecord } from './codec.js';
import type { RedisKeys } from './keys.js';
import type { ReplicaAcks } from './replica-acks.js';
import type { RedisScripts } from './scripts.js';

/** How long a `retry: false` run waits for its claim to reach the replicas before handing back. */
const LEASE_CONFIRM_MS = 10_000;

type Reply = Array<string | number | null>;
/** The claim script's reply: lease expiry, interrupted, and when loading fixed, data, steps. */
type ClaimReply = [number, number, string?, string?, string[]?];

/** What the Redis store lends its lease methods. */
export interface RedisLeaseParts {
  scripts: RedisScripts;
  keys: RedisKeys;
  acks: ReplicaAcks;
  permits: PermitSteps;
  /** On a Cluster, the permits that follow the lease writes; none on a single Redis. */
  clusterPermits: ClusterPermits | undefined;
  clock: Clock;
  /** The caller's time for lease scripts, or '' for Redis's own clock. */
  callerLeaseNow: () => number | '';
  /** The store's own read, for the createdAt a permit waits in order of. */
  get: (id: string) => Promise<TaskRecord | undefined>;
}

/** HGETALL's flat `name, value JSON, …` reply as the steps object `loadSteps` returns. */
function decodeSteps(flat: readonly string[] = []): Record<string, unknown> {
  const steps: Record<string, unknown> = {};
  for (let i = 0; i + 1 < flat.length; i += 2)
    steps[flat[i] as string] = JSON.parse(flat[i + 1] as string);
  return steps;
}

/** The Redis store's leases: claim, confirm, renew, release; one Lua script each. */
export class RedisLeases {
  constructor(private readonly parts: RedisLeaseParts) {}

  async claim(
    id: string,
    owner: string,
    leaseMs: number,
    options: ClaimOptions,
  ): Promise<LeaseGrant | undefined> {
    assertLeaseMs(leaseMs);
    const { parts } = this;
    const token = newToken();
    const load = options.load === true;
    const reply = (await parts.scripts.run(
      'claim',
      [...this.#leaseKeys(id), parts.keys.steps(id)],
      [
        owner,
        token,
        Math.ceil(leaseMs),
        parts.clock(),
        options.takeOverFrom ?? '',
        parts.callerLeaseNow(),
        load ? '1' : '0',
        options.spareExpired === true ? '1' : '0',
      ],
    )) as ClaimReply | null;
    if (reply === null) return undefined;
    const claimed = { token, expiresAt: Number(reply[0]), interrupted: reply[1] === 1 };
    const [, , fixed, data, steps] = reply;
    const task = load ? decodeRecord(fixed, data) : undefined;
    const createdAt = async () => (task ?? (await parts.get(id)))?.createdAt ?? 0;
    const grant = await grantWithPermit(parts.permits, claimed, options.permit, { id, createdAt });
    if (task === undefined) return grant;
    return { ...grant, loaded: { task, steps: decodeSteps(steps) } };
  }

  /**
   * Whether the lease `token` is on every replica of the task's slot (a Cluster; elsewhere
   * nothing can promote a replica that lacks it, so: durable, at no cost). A `retry: false`
   * run asks before its tool starts: a claim a failover loses would make the next claim look
   * like a first run.
   */
  async confirm(id: string, token: string): Promise<LeaseDurability> {
    const { acks, keys } = this.parts;
    if (!acks.needed) return 'durable';
    const check = { key: keys.task(id), field: 'leaseToken', value: token };
    return acks.confirm(keys.bucketOf(id), check, LEASE_CONFIRM_MS);
  }

  async renew(id: string, token: string, leaseMs: number): Promise<LeaseRenewal> {
    assertLeaseMs(leaseMs);
    const { parts } = this;
    const reply = (await parts.scripts.run('renew-lease', this.#leaseKeys(id), [
      token,
      Math.ceil(leaseMs),
      parts.clock(),
      parts.callerLeaseNow(),
    ])) as Reply;
    const status = isTaskStatus(reply[1]) ? reply[1] : undefined;
    const held = reply[0] === 1;
    if (held) await parts.clusterPermits?.leaseRenewed(id, token, leaseMs);
    return { held, status };
  }

  async release(id: string, token: string, options: ReleaseOptions): Promise<void> {
    const { parts } = this;
    const released = await parts.scripts.run('release-lease', this.#leaseKeys(id), [
      token,
      options.abandoned === true ? '1' : '0',
      parts.callerLeaseNow(),
    ]);
    if (released === 1) await parts.clusterPermits?.leaseEnded(id, token);
  }

  async releaseUntil(id: string, token: string, delayMs: number): Promise<number | undefined> {
    assertDelayMs(delayMs);
    const { parts } = this;
    const wakeAt = await parts.scripts.run('release-until', this.#leaseKeys(id), [
      token,
      Math.ceil(delayMs),
      parts.clock(),
      parts.callerLeaseNow(),
    ]);
    if (typeof wakeAt !== 'number') return undefined;
    await parts.clusterPermits?.leaseEnded(id, token);
    return wakeAt;
  }

  #leaseKeys(id: string): string[] {
    const { keys } = this.parts;
    return [keys.task(id), keys.working(keys.bucketOf(id))];
  }
}
