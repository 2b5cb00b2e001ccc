/**
 * The Postgres phases of `npm run chaos` (with TASKRAIL_POSTGRES_URL):
 * - `postgres`: two `serve --no-worker` replicas and two workers on a fresh schema, SIGKILLed
 *   or SIGTERMed and restarted at random, as in the Redis phase, one worker with its clock
 *   shifted (faketime) when that is installed, and a third worker cut off from the database
 *   by a TCP relay mid-run (chaos/partition.ts);
 * - `postgres-restart`: the same deployment on a PostgreSQL server of its own
 *   (test/helpers/own-postgres.ts), crashed (`pg_ctl stop -m immediate`) and started again twice
 *   while tasks run; skipped, saying why, without the binaries.
 * CHAOS_PHASES (see run.ts) chooses among them.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import {
  ownPostgresMissing,
  startOwnPostgres,
  type OwnPostgres,
} from '../test/helpers/own-postgres.js';
import type { TaskRecord } from '../src/task/record.js';
import type { Counts } from './check.js';
import type { Spec } from './expect.js';
import { partitionedWorker } from './partition.js';
import type { Proc } from './procs.js';

type StoreFault = { name: string; run(): Promise<void> };

interface Victim {
  name: string;
  proc: Proc;
  port?: number;
  restart(): Promise<void>;
}

interface PhaseSpec {
  name: string;
  store: string;
  clients: number;
  perClient: number;
  firstN: number;
  victims: (store: string) => Promise<Victim[]>;
  faults: StoreFault[];
  /** The tasks to run (default: the mixed plan of chaos/expect.ts). */
  plan?: (random: () => number, first: number, count: number) => Spec[];
  /** The share of CHAOS_MS this phase's chaos lasts (default 1). */
  chaosShare?: number;
  describe?: (tasks: TaskRecord[]) => string;
  /** Once the clients are done: brings the store to rest; the wake-up jobs left (must be 0). */
  settle?: (store: string) => Promise<number>;
}

/** What chaos/run.ts lends this file, so the phases run exactly like the others. */
export interface ChaosKit<R extends Counts> {
  phase(spec: PhaseSpec): Promise<R>;
  servers(count: number, extra: string[]): (store: string) => Promise<Victim[]>;
  workers(store: string, count: number, shift?: string): Promise<Victim[]>;
  log(line: string): void;
  /** The first worker's clock shift (faketime), when the machine can stage it. */
  shift: string | undefined;
  /** Whether CHAOS_PHASES chose the phase of this name (all when unset). */
  wanted(name: string): boolean;
}

export async function postgresPhases<R extends Counts>(kit: ChaosKit<R>): Promise<R[]> {
  const base = process.env['TASKRAIL_POSTGRES_URL'];
  if (base === undefined || base === '') {
    kit.log('postgres phases skipped: TASKRAIL_POSTGRES_URL is not set');
    return [];
  }
  const results = kit.wanted('postgres') ? [await sharedServerPhase(kit, base)] : [];
  if (!kit.wanted('postgres-restart')) return results;
  const missing = ownPostgresMissing();
  if (missing !== undefined) {
    kit.log(`postgres-restart phase skipped: ${missing}`);
    return results;
  }
  const own = await startOwnPostgres();
  try {
    results.push(await restartPhase(kit, own));
  } finally {
    await own.remove();
  }
  return results;
}

function deployment<R extends Counts>(kit: ChaosKit<R>) {
  return async (store: string): Promise<Victim[]> => [
    ...(await kit.servers(2, ['--no-worker'])(store)),
    ...(await kit.workers(store, 2, kit.shift)),
  ];
}

async function sharedServerPhase<R extends Counts>(kit: ChaosKit<R>, base: string): Promise<R> {
  const url = new URL(base);
  const schema = `chaos_${randomBytes(4).toString('hex')}`;
  url.searchParams.set('schema', schema);
  const cut = await partitionedWorker(url.toString(), (store, count) => kit.workers(store, count));
  try {
    return await kit.phase({
      name: 'postgres',
      store: url.toString(),
      clients: 4,
      perClient: 50,
      firstN: 100_001,
      victims: async (store) => [...(await deployment(kit)(store)), ...(await cut.victims(store))],
      faults: [cut.fault],
    });
  } finally {
    await cut.close();
    const client = new pg.Client({ connectionString: base });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}", "${schema}_jobs" CASCADE`);
    await client.end();
  }
}

async function restartPhase<R extends Counts>(kit: ChaosKit<R>, own: OwnPostgres): Promise<R> {
  return kit.phase({
    name: 'postgres-restart',
    store: `${own.url}?schema=chaos`,
    clients: 3,
    perClient: 30,
    firstN: 100_001,
    victims: deployment(kit),
    faults: [crashAndRestart(own, 1000), crashAndRestart(own, 2000)],
  });
}

/** Crashes the server as a power cut would, and starts it again after `downMs`. */
function crashAndRestart(own: OwnPostgres, downMs: number): StoreFault {
  return {
    name: `the PostgreSQL server crashes (immediate stop) and is down ${downMs / 1000} s`,
    async run() {
      await own.stop();
      await new Promise((resolve) => setTimeout(resolve, downMs));
      await own.start();
    },
  };
}
