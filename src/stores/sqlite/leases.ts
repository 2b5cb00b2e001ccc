import type { ClaimOptions, LeaseGrant, LeaseRenewal } from '../../store/port.js';
import { newToken } from '../../task/ids.js';
import { isExpired } from '../../task/record.js';
import type { TaskStatus } from '../../task/status.js';
import type { Clock } from '../../task/time.js';
import type { SqlitePermits } from './permits.js';
import type { ReadCache } from './read-cache.js';
import { rawClaimRow, rawRowToRecord, type ClaimHead } from './rows.js';
import type { Statements } from './statements.js';
import { readSteps } from './steps.js';

/** The SQLite store's claims and lease renewals; every method runs inside the caller's write transaction. */
export class SqliteLeases {
  readonly #sql: Statements;
  readonly #cache: ReadCache;
  readonly #permits: SqlitePermits;
  readonly #clock: Clock;

  constructor(sql: Statements, cache: ReadCache, permits: SqlitePermits, clock: Clock) {
    this.#sql = sql;
    this.#cache = cache;
    this.#permits = permits;
    this.#clock = clock;
  }

  claimInTx(
    id: string,
    owner: string,
    leaseMs: number,
    options: ClaimOptions,
  ): LeaseGrant | undefined {
    const now = this.#clock();
    // A claim to run reads the whole row at once: the runner needs it next, and one read of the
    // row costs less than a second one after the claim.
    const head = options.load === true ? this.#claimRow(id) : this.#claimHead(id);
    if (head === undefined || head.status !== 'working') return undefined;
    if (isExpired({ expiresAt: head.expires_at }, now)) return undefined;
    const live = head.lease_expires_at !== null && head.lease_expires_at > now;
    if (live && head.lease_owner !== options.takeOverFrom) return undefined;
    if (!live && spares(options, head)) return undefined;
    const grant = this.#grantLease(id, owner, now + leaseMs, head.lease_token !== null);
    if (options.permit !== undefined) {
      grant.permit = this.#permits.askInTx(options.permit, { taskId: id, token: grant.token }, now);
    }
    if (options.load !== true) return grant;
    const task = rawRowToRecord(head.values as unknown[]);
    grant.loaded = { task, steps: readSteps(this.#sql, id) };
    return grant;
  }

  renewInTx(id: string, token: string, leaseMs: number): LeaseRenewal {
    const now = this.#clock();
    const row = this.#sql.selectVisibleStatus.get({ id, now }) as
      { status: TaskStatus } | undefined;
    if (row === undefined) return { held: false, status: undefined };
    this.#cache.drop(id);
    const held = this.#sql.renewLease.run(now + leaseMs, id, token).changes > 0;
    return { held, status: row.status };
  }

  #grantLease(id: string, owner: string, expiresAt: number, interrupted: boolean): LeaseGrant {
    const token = newToken();
    this.#cache.drop(id);
    this.#sql.setLease.run(owner, token, expiresAt, id);
    return { token, expiresAt, interrupted };
  }

  #claimHead(id: string): (ClaimHead & { values?: unknown[] }) | undefined {
    return this.#sql.selectClaimHead.get(id) as ClaimHead | undefined;
  }

  #claimRow(id: string): (ClaimHead & { values: unknown[] }) | undefined {
    const values = this.#sql.selectClaimRow.get(id) as unknown[] | undefined;
    return values === undefined ? undefined : rawClaimRow(values);
  }
}

/** An expired lease still on record whose holder the claim gives time to renew. */
function spares(options: ClaimOptions, head: ClaimHead): boolean {
  return (
    options.spareExpired === true &&
    head.lease_token !== null &&
    head.lease_owner !== options.takeOverFrom
  );
}
