import { TaskrailError } from '../../task/errors.js';

export const DEFAULT_PREFIX = 'taskrail';

export interface RedisLocation {
  /** What ioredis connects to (credentials kept, `prefix` query removed). */
  connectUrl: string;
  /** For messages and logs: the URL without user name or password. */
  safeUrl: string;
  prefix: string;
  db: number;
}

const PREFIX_PATTERN = /^[A-Za-z0-9_.\-{}]{1,64}$/;

/** Parses `redis://[user:pass@]host:port/db[?prefix=NAME]` (also `rediss://`). */
export function parseRedisUrl(url: string): RedisLocation {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TaskrailError('CONFIG', `invalid redis store URL '${redact(url)}'`);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new TaskrailError('CONFIG', `not a redis URL: '${redact(url)}'`);
  }
  const prefix = parsed.searchParams.get('prefix') ?? DEFAULT_PREFIX;
  if (!PREFIX_PATTERN.test(prefix)) {
    throw new TaskrailError('CONFIG', `invalid redis key prefix '${prefix}'`);
  }
  const dbText = parsed.pathname.replace(/^\//, '') || '0';
  const db = Number(dbText);
  if (!Number.isInteger(db) || db < 0) {
    throw new TaskrailError('CONFIG', `invalid redis database '${dbText}' in '${redact(url)}'`);
  }
  parsed.searchParams.delete('prefix');
  const connectUrl = parsed.toString();
  const safe = new URL(connectUrl);
  safe.username = '';
  safe.password = '';
  if (prefix !== DEFAULT_PREFIX) safe.searchParams.set('prefix', prefix);
  return { connectUrl, safeUrl: safe.toString(), prefix, db };
}

/** Best effort for strings that are not even URLs: drop anything between `//` and `@`. */
function redact(url: string): string {
  return url.replace(/\/\/[^/@]*@/, '//');
}
