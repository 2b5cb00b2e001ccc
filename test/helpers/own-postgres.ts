/**
 * A PostgreSQL server of a test's own (initdb into a temp folder, on a free port), for faults
 * the shared server must not suffer: a crash (`pg_ctl stop -m immediate`, as a power cut would
 * leave it) and a restart. Run as the `postgres` user when we are root: initdb refuses root.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

const BIN = process.env['TASKRAIL_PG_BIN'] ?? '/usr/lib/postgresql/15/bin';
const READY_MS = 60_000;

export interface OwnPostgres {
  port: number;
  /** `postgres://…/postgres?schema=NAME` on this server. */
  url(schema: string): string;
  /** The running server process (until `crash`). */
  readonly process: ChildProcess;
  /** Stops the server at once, without a checkpoint: the next start runs crash recovery. */
  crash(): Promise<void>;
  /** Starts it again on the same data and port; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Crashes it and removes its folder. */
  remove(): Promise<void>;
}

/** Why no server of our own can be had here, or undefined when it can. */
export function ownPostgresUnavailable(): string | undefined {
  return existsSync(join(BIN, 'initdb'))
    ? undefined
    : `no PostgreSQL binaries in ${BIN} (set TASKRAIL_PG_BIN)`;
}

export async function startOwnPostgres(): Promise<OwnPostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-own-pg-'));
  chmodSync(dir, 0o777);
  const data = join(dir, 'data');
  const init = spawnSync(...asServerUser('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres']), {
    encoding: 'utf8',
  });
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed: ${init.stderr.trim().slice(0, 500)}`);
  }
  const port = await freePort();
  let server = await launch(data, dir, port);
  const own: OwnPostgres = {
    port,
    url: (schema) => `postgres://postgres@127.0.0.1:${port}/postgres?schema=${schema}`,
    get process() {
      return server.child;
    },
    crash: () => server.crash(),
    async start() {
      server = await launch(data, dir, port);
    },
    async remove() {
      await server.crash();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return own;
}

function asServerUser(program: string, args: string[]): [string, string[]] {
  const command = join(BIN, program);
  const root = process.getuid?.() === 0;
  return root ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
}

interface Running {
  child: ChildProcess;
  crash(): Promise<void>;
}

/** Starts the server in the foreground and waits until it accepts connections. */
async function launch(data: string, socketDir: string, port: number): Promise<Running> {
  const child = spawn(
    ...asServerUser('postgres', [
      ...['-D', data, '-p', String(port), '-k', socketDir],
      ...['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', '-c', 'fsync=on'],
    ]),
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr?.on('data', (chunk: Buffer) => (log = (log + chunk.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const running: Running = {
    child,
    async crash() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      spawnSync(...asServerUser('pg_ctl', ['stop', '-D', data, '-m', 'immediate']));
      await exited;
    },
  };
  try {
    await accepting(port, exited);
  } catch (error) {
    await running.crash();
    throw new Error(`${(error as Error).message}; server log: ${log}`);
  }
  return running;
}

async function accepting(port: number, exited: Promise<void>): Promise<void> {
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = Date.now() + READY_MS;
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
      if (gone) throw new Error('the PostgreSQL server exited while starting');
      if (Date.now() > deadline) {
        throw new Error(`PostgreSQL did not accept connections within ${READY_MS} ms: ${error}`);
      }
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
