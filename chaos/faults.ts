/**
 * Store faults of the chaos run, each real: another process holding the SQLite write lock, a
 * full disk under the SQLite file (a tmpfs), our own redis-server restarted (AOF on), a worker
 * whose clock is shifted (`faketime`). A fault that this machine cannot stage is skipped with
 * a printed reason.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { start } from './procs.js';
import { hasRedisServer, startOwnRedis } from '../test/helpers/own-redis.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Holds `BEGIN IMMEDIATE` on the database for `ms` from a separate process, then lets go. */
export async function holdSqliteLock(file: string, ms: number): Promise<void> {
  const script =
    "const D=require('better-sqlite3');const d=new D(process.argv[1],{timeout:30000});" +
    "d.exec('BEGIN IMMEDIATE');console.log('locked');" +
    "setTimeout(()=>{d.exec('ROLLBACK');d.close();process.exit(0)},Number(process.argv[2]));";
  const proc = start(['-e', script, file, String(ms)]);
  await proc.line(/locked/, 60_000);
  await proc.exited;
}

/** A tmpfs for the SQLite phase, so a full disk is real and quick; undefined when not root. */
export function mountSmallDisk(sizeMb: number): { path: string; unmount(): void } | string {
  const path = mkdtempSync(join(tmpdir(), 'taskrail-chaos-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'tmpfs', path], {
      stdio: 'pipe',
    });
  } catch (error) {
    rmSync(path, { recursive: true, force: true });
    return `cannot mount a tmpfs: ${String(error).split('\n')[0]}`;
  }
  return {
    path,
    unmount() {
      spawnSync('umount', ['-l', path]);
      rmSync(path, { recursive: true, force: true });
    },
  };
}

/** Fills the disk holding `folder` for `ms`, then frees it. */
export async function fillDisk(folder: string, ms: number): Promise<void> {
  const filler = join(folder, 'filler');
  const fd = openSync(filler, 'w');
  const chunk = Buffer.alloc(256 * 1024);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as { code?: string }).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
  await pause(ms);
  rmSync(filler, { force: true });
}

/** Our own redis-server with AOF (fsync always): restarting it must lose no acknowledged write. */
export interface ChaosRedis {
  url: string;
  restart(downMs: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startChaosRedis(): Promise<ChaosRedis | string> {
  if (!hasRedisServer()) return 'redis-server not installed';
  const redis = await startOwnRedis({
    appendonly: true,
    args: ['--maxmemory-policy', 'noeviction'],
  });
  return {
    url: redis.url,
    async restart(downMs) {
      await redis.stop();
      await pause(downMs);
      await redis.start();
    },
    stop: () => redis.remove(),
  };
}

/** Where Debian's faketime package puts its preload library (per architecture). */
const LIBFAKETIME = [
  '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/faketime/libfaketime.so.1',
].find((path) => existsSync(path));

/** `faketime` from Debian, or why not. */
export function faketimeMissing(): string | undefined {
  return LIBFAKETIME !== undefined
    ? undefined
    : 'faketime is not installed (apt-get install faketime)';
}

/**
 * The wrapper that runs a process with its wall clock shifted (monotonic time untouched). It
 * preloads libfaketime through `env`, which execs: the worker is then the process chaos
 * signals. The `faketime` command forks instead, so killing it orphaned the worker.
 */
export function shiftedClock(shift: string): string[] {
  return [
    'env',
    `LD_PRELOAD=${LIBFAKETIME ?? 'libfaketime.so.1'}`,
    `FAKETIME=${shift}`,
    'FAKETIME_DONT_FAKE_MONOTONIC=1',
  ];
}
