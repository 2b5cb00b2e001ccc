import { TaskrailError } from '../../task/errors.js';

export const DEFAULT_SCHEMA = 'taskrail';
export const DEFAULT_POOL_SIZE = 10;

export interface PostgresLocation {
  /** What node-postgres connects to (credentials kept, taskrail's own query options removed). */
  connectUrl: string;
  /** For messages and logs: the URL without user name or password. */
  safeUrl: string;
  /** The schema holding taskrail's tables. */
  schema: string;
  /** Connections this process's pool may open (LISTEN takes one more). */
  poolSize: number;
}

/** Lower case only: the schema name is also the NOTIFY channel's, and both are quoted. */
const SCHEMA_PATTERN = /^[a-z_][a-z0-9_]{0,47}$/;

/** Parses `postgres://[user:pass@]host:port/db[?schema=NAME&pool=N]` (also `postgresql://`). */
export function parsePostgresUrl(url: string): PostgresLocation {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TaskrailError('CONFIG', `invalid postgres store URL '${redact(url)}'`);
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new TaskrailError('CONFIG', `not a postgres URL: '${redact(url)}'`);
  }
  const schema = parsed.searchParams.get('schema') ?? DEFAULT_SCHEMA;
  if (!SCHEMA_PATTERN.test(schema)) {
    throw new TaskrailError(
      'CONFIG',
      `invalid schema '${schema}' in the postgres store URL: use 1-48 lower-case letters, ` +
        'digits or _ (not starting with a digit), e.g. ?schema=taskrail',
    );
  }
  const poolSize = parsePoolSize(parsed.searchParams.get('pool'));
  parsed.searchParams.delete('schema');
  parsed.searchParams.delete('pool');
  const connectUrl = parsed.toString();
  const safe = new URL(connectUrl);
  safe.username = '';
  safe.password = '';
  if (schema !== DEFAULT_SCHEMA) safe.searchParams.set('schema', schema);
  return { connectUrl, safeUrl: safe.toString(), schema, poolSize };
}

function parsePoolSize(text: string | null): number {
  if (text === null) return DEFAULT_POOL_SIZE;
  const size = Number(text);
  if (!/^\d+$/.test(text) || size < 1 || size > 1000) {
    throw new TaskrailError(
      'CONFIG',
      `invalid ?pool=${text} in the postgres store URL: use a whole number from 1 to 1000`,
    );
  }
  return size;
}

/** Best effort for strings that are not even URLs: drop anything between `//` and `@`. */
function redact(url: string): string {
  return url.replace(/\/\/[^/@]*@/, '//');
}
