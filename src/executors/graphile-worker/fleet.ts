import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from '../../runtime/api.js';
import { loadPg } from '../../stores/postgres/driver.js';
import { quoteIdent } from '../../stores/postgres/migrations.js';
import { parsePostgresUrl } from '../../stores/postgres/url.js';
import {
  fleetMismatches,
  REFRESH_MS,
  STALE_MS,
  type FleetMember,
  type FleetMembership,
} from '../shared/fleet-members.js';

const FLEET_TIMEOUT_MS = 5_000;

/**
 * Announces this process in the store schema's `fleet` table (created by the store's
 * migrations, so open the store first) and warns about live members that serve other tools or
 * run another version. Staleness is judged by the database clock.
 */
export async function joinPostgresFleet(
  storeUrl: string,
  member: Omit<FleetMember, 'host' | 'pid' | 'seenAt'>,
  logger: Logger,
): Promise<FleetMembership> {
  const location = parsePostgresUrl(storeUrl);
  const table = `${quoteIdent(location.schema)}.fleet`;
  const pg = await loadPg();
  const pool = new pg.Pool({
    connectionString: location.connectUrl,
    max: 1,
    // Cut off by a link that drops packets, a query would otherwise wait forever: the refresh
    // and the workers gauge are retried later, and a stop must not hang on leaving.
    connectionTimeoutMillis: FLEET_TIMEOUT_MS,
    query_timeout: FLEET_TIMEOUT_MS,
    keepAlive: true,
    // Kept between refreshes: pg's default (10 s idle) closed it and opened a new one every time.
    idleTimeoutMillis: 3 * REFRESH_MS,
  });
  pool.on('error', () => undefined); // the next refresh reconnects
  const field = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const self = (): FleetMember => ({ ...member, host: hostname(), pid: process.pid, seenAt: 0 });
  const announce = () =>
    pool.query(
      `INSERT INTO ${table} (member, info, seen_at) VALUES ($1, $2, now())
       ON CONFLICT (member) DO UPDATE SET info = excluded.info, seen_at = now()`,
      [field, JSON.stringify(self())],
    );
  try {
    await announce();
    await pool.query(`DELETE FROM ${table} WHERE seen_at < now() - $1::float8 * interval '1 ms'`, [
      STALE_MS,
    ]);
    const { rows } = await pool.query<{ info: string }>(
      `SELECT info FROM ${table} WHERE member <> $1`,
      [field],
    );
    const others = rows.flatMap((row) => parseMember(row.info));
    const mismatches = fleetMismatches(self(), others);
    for (const problem of mismatches) logger.warn(`fleet mismatch: ${problem}`);
    const timer = setInterval(() => {
      announce().catch(() => undefined);
    }, REFRESH_MS);
    timer.unref();
    return {
      mismatches,
      async liveWorkers() {
        const { rows: live } = await pool.query<{ info: string }>(
          `SELECT info FROM ${table}
            WHERE member <> $1 AND seen_at >= now() - $2::float8 * interval '1 ms'`,
          [field, STALE_MS],
        );
        return live.flatMap((row) => parseMember(row.info)).filter((m) => m.role === 'worker')
          .length;
      },
      async leave() {
        clearInterval(timer);
        await pool.query(`DELETE FROM ${table} WHERE member = $1`, [field]).catch(() => undefined);
        await pool.end();
      },
    };
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }
}

function parseMember(text: string): FleetMember[] {
  try {
    const value = JSON.parse(text) as FleetMember;
    return Array.isArray(value.tools) ? [value] : [];
  } catch {
    return [];
  }
}
