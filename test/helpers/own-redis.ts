import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { accepts, freePort } from './ports.js';
import { waitFor } from './wait.js';

/** Kept for importers from before ports.ts. */
export { freePort };

/** A private redis-server (never the shared one on 6379): tests may stop and restart it. */
export interface OwnRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it and deletes its folder. */
  remove(): Promise<void>;
}

export function hasRedisServer(): boolean {
  return spawnSync('redis-server', ['--version']).status === 0;
}

export interface OwnRedisOptions {
  /** AOF on, fsync'd on every write (`always`, the default) or once a second. */
  appendonly?: boolean;
  appendfsync?: 'always' | 'everysec';
  /** More redis-server arguments (e.g. `--maxmemory-policy noeviction`). */
  args?: string[];
}

/** Starts redis-server on a free port in a temp folder; `start()` again after `stop()` keeps its data. */
export async function startOwnRedis(options: OwnRedisOptions = {}): Promise<OwnRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', ''];
  if (options.appendonly === true) {
    args.push('--appendonly', 'yes', '--appendfsync', options.appendfsync ?? 'always');
  } else args.push('--appendonly', 'no');
  args.push(...(options.args ?? []));
  const own: OwnRedis = {
    url: `redis://127.0.0.1:${port}/0`,
    port,
    async start() {
      child = spawn('redis-server', args, { stdio: 'ignore' });
      await waitFor(`redis-server on port ${port}`, () => accepts(port));
    },
    async stop() {
      const running = child;
      child = undefined;
      if (running === undefined || running.exitCode !== null) return;
      const exited = new Promise((resolve) => running.once('exit', resolve));
      running.kill('SIGTERM');
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
