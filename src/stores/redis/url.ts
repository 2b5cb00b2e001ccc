import { TaskrailError } from '../../task/errors.js';

export const DEFAULT_PREFIX = 'taskrail';

/** Where a Redis Cluster is: the nodes to start from (ioredis finds the others) and the login. */
export interface ClusterSeeds {
  nodes: Array<{ host: string; port: number }>;
  username?: string;
  password?: string;
  tls: boolean;
}

export interface RedisLocation {
  /** What ioredis connects to (credentials kept, taskrail's own query options removed). */
  connectUrl: string;
  /** For messages and logs: the URL without user name or password. */
  safeUrl: string;
  prefix: string;
  db: number;
  /** Set by `?cluster=1`: connect with ioredis `Cluster` from these seed nodes. */
  cluster?: ClusterSeeds;
}

/** No braces: the store adds its own hash tags (`{b}`), and a brace here would override them. */
const PREFIX_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;
const FLAG = /^(1|true|yes|0|false|no)$/i;
const NODE = /^\[?([A-Za-z0-9.\-:]+?)\]?:(\d{1,5})$/;

/**
 * Parses `redis://[user:pass@]host:port/db[?prefix=NAME]` (also `rediss://`). A Redis Cluster
 * is `redis://[user:pass@]host:port[?cluster=1][&nodes=host:port,host:port]`: the host and any
 * `nodes` are where discovery starts; a cluster has only database 0.
 */
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
    throw new TaskrailError(
      'CONFIG',
      `invalid redis key prefix '${prefix}': use 1 to 64 letters, digits, '_', '.' or '-'`,
    );
  }
  const dbText = parsed.pathname.replace(/^\//, '') || '0';
  const db = Number(dbText);
  if (!Number.isInteger(db) || db < 0) {
    throw new TaskrailError('CONFIG', `invalid redis database '${dbText}' in '${redact(url)}'`);
  }
  const cluster = clusterSeeds(parsed, db, url);
  for (const name of ['prefix', 'cluster', 'nodes']) parsed.searchParams.delete(name);
  const connectUrl = parsed.toString();
  const safe = new URL(connectUrl);
  safe.username = '';
  safe.password = '';
  if (prefix !== DEFAULT_PREFIX) safe.searchParams.set('prefix', prefix);
  if (cluster !== undefined) safe.searchParams.set('cluster', '1');
  const location = { connectUrl, safeUrl: safe.toString(), prefix, db };
  return cluster === undefined ? location : { ...location, cluster };
}

function clusterSeeds(parsed: URL, db: number, url: string): ClusterSeeds | undefined {
  const flag = parsed.searchParams.get('cluster');
  const extra = parsed.searchParams.get('nodes');
  if (flag !== null && !FLAG.test(flag)) {
    throw new TaskrailError('CONFIG', `invalid cluster=${flag} in '${redact(url)}': use cluster=1`);
  }
  const on = flag !== null && /^(1|true|yes)$/i.test(flag);
  if (!on) {
    if (extra === null) return undefined;
    throw new TaskrailError('CONFIG', `nodes= needs cluster=1 in '${redact(url)}'`);
  }
  if (db !== 0) {
    throw new TaskrailError(
      'CONFIG',
      `a Redis Cluster has only database 0: drop '/${db}' from '${redact(url)}'`,
    );
  }
  const first = `${parsed.hostname}:${parsed.port || '6379'}`;
  const nodes = [first, ...(extra ?? '').split(',').filter((node) => node !== '')].map((node) =>
    parseNode(node, url),
  );
  const seeds: ClusterSeeds = { nodes, tls: parsed.protocol === 'rediss:' };
  if (parsed.username !== '') seeds.username = decodeURIComponent(parsed.username);
  if (parsed.password !== '') seeds.password = decodeURIComponent(parsed.password);
  return seeds;
}

function parseNode(text: string, url: string): { host: string; port: number } {
  const match = NODE.exec(text.trim());
  const port = Number(match?.[2]);
  if (match === null || port < 1 || port > 65535) {
    throw new TaskrailError(
      'CONFIG',
      `invalid cluster node '${text}' in '${redact(url)}': use nodes=HOST:PORT,HOST:PORT`,
    );
  }
  return { host: match[1] as string, port };
}

/** Best effort for strings that are not even URLs: drop anything between `//` and `@`. */
function redact(url: string): string {
  return url.replace(/\/\/[^/@]*@/, '//');
}
