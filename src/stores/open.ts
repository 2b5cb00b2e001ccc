import { isAbsolute, resolve } from 'node:path';
import type { TaskStore } from '../store/port.js';
import { TaskrailError } from '../task/errors.js';
import { importWithPeers, type PeerNeed } from '../task/peer-dependency.js';
import type { Clock } from '../task/time.js';
import { storeKindOf } from '../store/url.js';

export const DEFAULT_STORE_URL = 'sqlite:./.taskrail/tasks.db';

export interface OpenStoreOptions {
  clock?: Clock;
  /** Suppress the warning that `memory:` loses tasks on exit. */
  quiet?: boolean;
  /** Base folder for relative `sqlite:` paths. Default `process.cwd()`. */
  cwd?: string;
}

/** What `src/stores/redis/index.ts` exports; loaded only when a redis URL is used. */
interface RedisStoreModule {
  openRedisStore(url: string, options?: OpenStoreOptions): Promise<TaskStore>;
}

/** What `src/stores/postgres/index.ts` exports; loaded only when a postgres URL is used. */
interface PostgresStoreModule {
  openPostgresStore(url: string, options?: OpenStoreOptions): Promise<TaskStore>;
}

/** A redis store runs its tasks through BullMQ, so both drivers are named together. */
const REDIS_PEERS = ['ioredis', 'bullmq'];

function redisScheme(url: string): string {
  return url.startsWith('rediss:') ? 'rediss:' : 'redis:';
}

/**
 * The optional packages a store URL needs: its driver, and with `jobEngine` (serve, proxy,
 * worker) the engine that runs its tasks. Embedded stores need none.
 */
export function storePeers(url: string, jobEngine: boolean): PeerNeed | undefined {
  const trimmed = url.trim();
  if (trimmed.startsWith('redis://') || trimmed.startsWith('rediss://')) {
    return { packages: REDIS_PEERS, feature: `a ${redisScheme(trimmed)}// store` };
  }
  if (!isPostgresUrl(trimmed)) return undefined;
  return {
    packages: jobEngine ? ['pg', 'graphile-worker'] : ['pg'],
    feature: 'a postgres:// store',
  };
}

const USAGE = 'use sqlite:PATH, memory:, redis://HOST:PORT/DB or postgres://HOST:PORT/DB';

/** True for `postgres://` and `postgresql://` store URLs. */
export function isPostgresUrl(url: string): boolean {
  return storeKindOf(url) === 'postgres';
}

function unknownUrl(url: string, why = ''): TaskrailError {
  return new TaskrailError('CONFIG', `unknown store URL '${url}'${why}: ${USAGE}`);
}

/** The file a `sqlite:` URL names: relative paths resolve against `cwd`. */
export function sqlitePathFromUrl(url: string, cwd = process.cwd()): string {
  let path = splitQuery(url.slice('sqlite:'.length)).path;
  // sqlite:///abs/path (URL style) means /abs/path.
  if (path.startsWith('///')) path = path.slice(2);
  else if (path.startsWith('//')) throw unknownUrl(url, ' (a sqlite URL has no host)');
  if (path === '') throw unknownUrl(url, ' (the sqlite path is empty)');
  return isAbsolute(path) ? path : resolve(cwd, path);
}

function splitQuery(rest: string): { path: string; query: URLSearchParams } {
  const at = rest.indexOf('?');
  return at < 0
    ? { path: rest, query: new URLSearchParams() }
    : { path: rest.slice(0, at), query: new URLSearchParams(rest.slice(at + 1)) };
}

const SYNCHRONOUS = ['normal', 'full'] as const;

/** The options a `sqlite:PATH?synchronous=full` URL sets; anything else is refused. */
export function sqliteOptionsFromUrl(url: string): { synchronous?: 'normal' | 'full' } {
  const { query } = splitQuery(url.slice('sqlite:'.length));
  const options: { synchronous?: 'normal' | 'full' } = {};
  for (const [key, value] of query) {
    const mode = SYNCHRONOUS.find((m) => m === value.toLowerCase());
    if (key !== 'synchronous' || mode === undefined) {
      throw new TaskrailError(
        'CONFIG',
        `unknown sqlite option '${key}=${value}' in '${url}': the one option is ` +
          'synchronous=normal (the default) or synchronous=full (every reply after an fsync)',
      );
    }
    options.synchronous = mode;
  }
  return options;
}

/**
 * Opens the task store a URL names. Drivers load on demand, so importing taskrail loads no
 * database driver.
 */
export async function openStore(url: string, options: OpenStoreOptions = {}): Promise<TaskStore> {
  const trimmed = url.trim();
  const storeOptions = options.clock === undefined ? {} : { clock: options.clock };
  const kind = storeKindOf(trimmed);
  if (kind === 'sqlite') {
    const path = sqlitePathFromUrl(trimmed, options.cwd);
    const sqliteOptions = { ...storeOptions, ...sqliteOptionsFromUrl(trimmed) };
    const { SqliteTaskStore } = await import('./sqlite/index.js');
    return new SqliteTaskStore(path, sqliteOptions);
  }
  if (kind === 'memory') {
    if (options.quiet !== true) {
      process.stderr.write(
        'taskrail: warning: using the memory: task store; every task is lost when this process exits\n',
      );
    }
    const { MemoryTaskStore } = await import('./memory/index.js');
    return new MemoryTaskStore(storeOptions);
  }
  if (kind === 'redis') {
    // A variable specifier keeps the redis adapter (and its drivers) out of the type graph
    // and out of the load path until a redis URL is actually used.
    const specifier = './redis/index.js';
    const redis = await importWithPeers(
      async () => (await import(specifier)) as RedisStoreModule,
      REDIS_PEERS,
      `a ${redisScheme(trimmed)}// store`,
    );
    return redis.openRedisStore(trimmed, options);
  }
  if (kind === 'postgres') {
    const specifier = './postgres/index.js';
    const postgres = (await import(specifier)) as PostgresStoreModule;
    return postgres.openPostgresStore(trimmed, options);
  }
  throw unknownUrl(url);
}
