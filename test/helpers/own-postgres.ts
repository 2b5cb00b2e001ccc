import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './ports.js';
import { waitFor } from './wait.js';

const BIN = process.env['TASKRAIL_PG_BIN'] ?? '/usr/lib/postgresql/15/bin';

/** A private PostgreSQL server (never the shared one on 5432): tests may crash and restart it. */
export interface OwnPostgres {
  /** `postgres://postgres@127.0.0.1:PORT/postgres` */
  url: string;
  port: number;
  /** Crashes it (`pg_ctl stop -m immediate`, as a power cut would). */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it and deletes its folder. */
  remove(): Promise<void>;
}

/** Why this machine cannot run a private PostgreSQL server, or undefined when it can. */
export function ownPostgresMissing(): string | undefined {
  return existsSync(join(BIN, 'initdb'))
    ? undefined
    : `no PostgreSQL binaries in ${BIN} (set TASKRAIL_PG_BIN)`;
}

/** initdb refuses root: then the `postgres` user runs the server. */
function asServerUser(command: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0
    ? ['runuser', ['-u', 'postgres', '--', command, ...args]]
    : [command, args];
}

async function accepts(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

export async function startOwnPostgres(): Promise<OwnPostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-pg-'));
  chmodSync(dir, 0o777);
  const data = join(dir, 'data');
  const [initCmd, initArgs] = asServerUser(join(BIN, 'initdb'), [
    ...['-D', data, '-A', 'trust', '-U', 'postgres'],
  ]);
  const init = spawnSync(initCmd, initArgs, { encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr.slice(0, 300)}`);
  const port = await freePort();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let child: ChildProcess | undefined;
  const own: OwnPostgres = {
    url,
    port,
    async start() {
      const [cmd, args] = asServerUser(join(BIN, 'postgres'), [
        ...['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1'],
      ]);
      child = spawn(cmd, args, { stdio: 'ignore' });
      await waitFor(`postgres on port ${port}`, () => accepts(url), {
        timeoutMs: 60_000,
        intervalMs: 100,
      });
    },
    async stop() {
      const running = child;
      child = undefined;
      if (running === undefined || running.exitCode !== null) return;
      const exited = new Promise((resolve) => running.once('exit', resolve));
      const [cmd, args] = asServerUser(join(BIN, 'pg_ctl'), [
        'stop',
        '-D',
        data,
        '-m',
        'immediate',
      ]);
      spawnSync(cmd, args, { encoding: 'utf8' });
      await exited;
    },
    async remove() {
      await own.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await own.start();
  return own;
}
