/**
 * The Postgres phases of `npm run chaos` (with TASKRAIL_POSTGRES_URL):
 * - `postgres`: two `serve --no-worker` replicas and two workers on a fresh schema, SIGKILLed
 *   and restarted at random, as in the Redis phase;
 * - `postgres-restart`: the same deployment on a PostgreSQL server of its own
 *   (test/helpers/own-postgres.ts), which is also crashed (`pg_ctl stop -m immediate`) every
 *   third round and started again while tasks run; skipped, saying why, without the binaries.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import {
  ownPostgresUnavailable,
  startOwnPostgres,
  type OwnPostgres,
} from '../test/helpers/own-postgres.js';
import type { Counts } from './check.js';
import type { Proc, Victim } from './procs.js';

interface PhaseSpec {
  name: string;
  store: string;
  clients: number;
  perClient: number;
  firstN: number;
  victims: (store: string) => Promise<Victim[]>;
}

/** What chaos/run.ts lends this file, so the phases run exactly like the others. */
export interface ChaosKit {
  phase(spec: PhaseSpec): Promise<Counts>;
  servers(count: number, extra: string[]): (store: string) => Promise<Victim[]>;
  workers(store: string, count: number): Promise<Victim[]>;
  log(line: string): void;
  /** Whether CHAOS_PHASES chose the phase of this name (all when unset). */
  wanted(name: string): boolean;
}

export async function postgresPhases(kit: ChaosKit): Promise<Counts[]> {
  const base = process.env['TASKRAIL_POSTGRES_URL'];
  if (base === undefined || base === '') {
    kit.log('postgres phases skipped: TASKRAIL_POSTGRES_URL is not set');
    return [];
  }
  const results = kit.wanted('postgres') ? [await sharedServerPhase(kit, base)] : [];
  if (!kit.wanted('postgres-restart')) return results;
  const own = await ownServerVictim(kit.log);
  if (own === undefined) return results;
  try {
    results.push(await restartPhase(kit, own));
  } finally {
    await own.remove();
  }
  return results;
}

function deployment(kit: ChaosKit, extra: Victim[] = []) {
  return async (store: string): Promise<Victim[]> => [
    ...(await kit.servers(2, ['--no-worker'])(store)),
    ...(await kit.workers(store, 2)),
    ...extra,
  ];
}

async function sharedServerPhase(kit: ChaosKit, base: string): Promise<Counts> {
  const url = new URL(base);
  const schema = `chaos_${randomBytes(4).toString('hex')}`;
  url.searchParams.set('schema', schema);
  try {
    return await kit.phase({
      name: 'postgres',
      store: url.toString(),
      clients: 4,
      perClient: 50,
      firstN: 100_001,
      victims: deployment(kit),
    });
  } finally {
    const client = new pg.Client({ connectionString: base });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}", "${schema}_jobs" CASCADE`);
    await client.end();
  }
}

async function restartPhase(kit: ChaosKit, own: OwnPostgres): Promise<Counts> {
  return kit.phase({
    name: 'postgres-restart',
    store: own.url('chaos'),
    clients: 3,
    perClient: 30,
    firstN: 100_001,
    victims: deployment(kit, [asVictim(own)]),
  });
}

/** The own server as a victim: "killed" is a crash, "restarted" is crash recovery and start. */
async function ownServerVictim(log: (line: string) => void): Promise<OwnPostgres | undefined> {
  const unavailable = ownPostgresUnavailable();
  if (unavailable !== undefined) {
    log(`postgres-restart phase skipped: ${unavailable}`);
    return undefined;
  }
  try {
    return await startOwnPostgres();
  } catch (error) {
    log(`postgres-restart phase skipped: ${(error as Error).message.slice(0, 300)}`);
    return undefined;
  }
}

function asVictim(own: OwnPostgres): Victim {
  const proc = (): Proc => ({
    child: own.process,
    lines: [],
    exited: new Promise<void>((resolve) => own.process.once('exit', () => resolve())),
    waitFor: () => Promise.reject(new Error('not used')),
    kill: () => own.crash(),
  });
  const victim: Victim = {
    name: 'postgres server',
    proc: proc(),
    every: 3,
    async restart() {
      await own.start();
      victim.proc = proc();
    },
  };
  return victim;
}
