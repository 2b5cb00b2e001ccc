/**
 * Private redis-server processes for the ten-million benchmark (never the shared Redis on 6379:
 * a fill of several GB would crowd everyone else's tests), and the filled dataset kept between
 * runs as an RDB file in the OS temp folder, so a later run loads it in seconds instead of
 * filling it again.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { Redis } from 'ioredis';
import { waitFor } from '../../src/testing/support/wait.js';
import { freePort } from '../../test/helpers/ports.js';
import { createCommand, createScriptSource, fillRedis, filledTask } from './redis-fill.js';

export const FILL_PREFIX = 'taskrail';
const LOAD_TIMEOUT_MS = 10 * 60_000;
/** Filled first, to measure the bytes a task costs before committing to the whole fill. */
const PROBE_TASKS = 100_000;
/** Memory left to the machine's other work beyond a fill's estimate. */
const RESERVE_BYTES = 3 * 2 ** 30;
/** The allocator's overhead over used_memory (RSS / used_memory was 1.06–1.08 at 100k) and the estimate's error. */
const HEADROOM = 1.1;

export interface BenchRedis {
  port: number;
  /** The store URL for `taskrail serve`. */
  url: string;
  pid: number;
  client: Redis;
  usedMemory(): Promise<number>;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
// A server holding GBs must not outlive this process, however it ends (the bench runner's
// timeout sends SIGTERM).
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(1));

/** Starts redis-server on a free loopback port; loads `dir/dbfilename` if it exists. */
export async function startBenchRedis(dir: string, dbfilename: string): Promise<BenchRedis> {
  const port = await freePort();
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir];
  args.push('--dbfilename', dbfilename, '--save', '', '--appendonly', 'no');
  const child: ChildProcess = spawn('redis-server', args, { stdio: 'ignore' });
  // If the machine runs out of memory, the kernel ends this server rather than anyone's work.
  writeFileSync(`/proc/${child.pid}/oom_score_adj`, '1000');
  running.add(child);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.once('exit', () => running.delete(child));
  const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, enableReadyCheck: false });
  client.on('error', () => undefined); // refused until it listens: waitFor retries
  const ready = async () => {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
    if (client.status !== 'ready') await client.connect();
    return (await client.ping()) === 'PONG';
  };
  await waitFor(`redis-server on port ${port} to load ${dbfilename}`, ready, {
    timeoutMs: LOAD_TIMEOUT_MS,
    intervalMs: 100,
  });
  return {
    port,
    url: `redis://127.0.0.1:${port}/0`,
    pid: child.pid as number,
    client,
    usedMemory: async () => Number(/used_memory:(\d+)/.exec(await client.info('memory'))?.[1]),
    async stop() {
      client.disconnect();
      if (child.exitCode === null) child.kill('SIGTERM'); // --save "": nothing written on exit
      await exited;
    },
  };
}

export interface FilledRedis {
  server: BenchRedis;
  seed: string;
  firstCreatedAt: number;
  /** An empty server's used_memory: the baseline of the memory per task. */
  emptyBytes: number;
  /** used_memory after the fill (or load) minus an empty server's, per task. */
  memoryBytesPerTask: number;
  /** The RDB file's size per task. */
  rdbBytesPerTask: number;
  /** Seconds the fill took (0 when loaded from the cache). */
  fillSeconds: number;
  /** Seconds the RDB took to load (0 when filled now). */
  loadSeconds: number;
}

/**
 * What a fill records about itself, in its own Redis (outside the store's prefix), so an RDB
 * file always carries the seed its ids were derived from: no side file can disagree with it.
 */
const FILL_INFO_KEY = 'bench-fill-info';
interface FillInfo {
  count: number;
  seed: string;
  firstCreatedAt: number;
  fillSeconds: number;
}
/** Redis memory per RDB byte: 2.15–2.2 measured at 100k–10M tasks (HEADROOM adds the margin). */
const MEMORY_PER_RDB_BYTE = 2.2;

/**
 * What the stored bytes depend on: the create script and the codec's output for one task. A
 * change to either names a new cache file, so a stale layout is never measured.
 */
async function layoutFingerprint(): Promise<string> {
  const sample = filledTask('fingerprint', 7, 1_700_000_000_000);
  const command = await createCommand(FILL_PREFIX, sample, 1_700_000_001_000);
  return createHash('sha256').update(command).digest('hex').slice(0, 12);
}

async function loadScript(server: BenchRedis): Promise<void> {
  await server.client.script('LOAD', createScriptSource());
}

/** Fills an empty server; refuses a fill that the machine's free memory could not hold. */
async function fillServer(server: BenchRedis, count: number, seed: string, firstCreatedAt: number) {
  await loadScript(server);
  const empty = await server.usedMemory();
  const plan = { port: server.port, prefix: FILL_PREFIX, seed, firstCreatedAt };
  const probe = Math.min(count, PROBE_TASKS);
  await fillRedis({ ...plan, from: 0, to: probe });
  const estimate = ((await server.usedMemory()) - empty) * (count / probe);
  assertFits(estimate, `${count} tasks (estimated from the first ${probe})`);
  // Past the headroom Redis refuses writes (noeviction): the fill fails, not the machine.
  await server.client.config('SET', 'maxmemory', String(Math.ceil(empty + estimate * HEADROOM)));
  await fillRedis({ ...plan, from: probe, to: count });
  await server.client.config('SET', 'maxmemory', '0');
}

function assertFits(bytes: number, what: string): void {
  const kb = /MemAvailable:\s+(\d+)/.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1];
  const available = Number(kb) * 1024;
  if (bytes * HEADROOM + RESERVE_BYTES <= available) return;
  const gib = (n: number) => `${(n / 2 ** 30).toFixed(1)} GiB`;
  throw new Error(
    `${what}: about ${gib(bytes)} of Redis memory, and only ${gib(available)} is available ` +
      `(${HEADROOM}× that and ${gib(RESERVE_BYTES)} for everything else are asked)`,
  );
}

/** A fresh server in `dir` with `count` tasks, saved to its RDB file `dir/tasks.rdb`. */
export async function filledRedis(dir: string, count: number): Promise<FilledRedis> {
  const seed = randomBytes(6).toString('hex');
  const firstCreatedAt = Date.now() - count;
  const server = await startBenchRedis(dir, 'tasks.rdb');
  const empty = await server.usedMemory();
  const started = performance.now();
  await fillServer(server, count, seed, firstCreatedAt);
  const fillSeconds = (performance.now() - started) / 1000;
  const memoryBytesPerTask = ((await server.usedMemory()) - empty) / count;
  const info: FillInfo = { count, seed, firstCreatedAt, fillSeconds };
  await server.client.set(FILL_INFO_KEY, JSON.stringify(info));
  await server.client.save();
  return {
    server,
    seed,
    firstCreatedAt,
    emptyBytes: empty,
    memoryBytesPerTask,
    rdbBytesPerTask: statSync(join(dir, 'tasks.rdb')).size / count,
    fillSeconds,
    loadSeconds: 0,
  };
}

/** The server of a cached RDB, if it loads whole (its fill's info, `count` tasks, none expired). */
async function loadCached(path: string, count: number, emptyBytes: number) {
  assertFits(statSync(path).size * MEMORY_PER_RDB_BYTE, `loading ${count} tasks from ${path}`);
  const started = performance.now();
  const server = await startBenchRedis(dirname(path), basename(path));
  const loadSeconds = (performance.now() - started) / 1000;
  const text = await server.client.get(FILL_INFO_KEY);
  const info = text === null ? undefined : (JSON.parse(text) as FillInfo);
  if (info?.count !== count || (await server.client.dbsize()) < count) {
    await server.stop();
    return undefined;
  }
  const filled: FilledRedis = {
    server,
    seed: info.seed,
    firstCreatedAt: info.firstCreatedAt,
    emptyBytes,
    memoryBytesPerTask: ((await server.usedMemory()) - emptyBytes) / count,
    rdbBytesPerTask: statSync(path).size / count,
    fillSeconds: info.fillSeconds,
    loadSeconds,
  };
  return filled;
}

/**
 * `count` tasks from the cache folder's RDB when its layout and size match, else filled now in
 * a folder of its own and moved into the cache whole (a run beside this one never sees half a
 * file); older fills of that size are deleted (they are GBs).
 * `emptyBytes` is an empty server's used_memory (the baseline of the memory per task).
 */
export async function cachedRedis(count: number, emptyBytes: number): Promise<FilledRedis> {
  const folder = join(tmpdir(), 'taskrail-bench-cache');
  mkdirSync(folder, { recursive: true });
  const name = `redis-${count}-${await layoutFingerprint()}.rdb`;
  const path = join(folder, name);
  if (existsSync(path)) {
    const cached = await loadCached(path, count, emptyBytes);
    if (cached !== undefined) return cached;
  }
  const filling = mkdtempSync(join(folder, 'filling-'));
  try {
    const filled = await filledRedis(filling, count);
    for (const old of readdirSync(folder).filter((f) => f.startsWith(`redis-${count}-`))) {
      rmSync(join(folder, old), { force: true });
    }
    renameSync(join(filling, 'tasks.rdb'), path);
    return filled;
  } finally {
    rmSync(filling, { recursive: true, force: true });
  }
}
