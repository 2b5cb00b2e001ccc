import { randomBytes } from 'node:crypto';
import type { TaskStore } from '../../store/port.js';
import { TaskrailError } from '../../task/errors.js';
import type { Clock } from '../../task/time.js';
import { loadPg, type PgModule } from './driver.js';
import { storeError } from './errors.js';
import { EventRelay } from '../shared/event-relay.js';
import { ChannelListener } from './listen.js';
import { migrate, quoteIdent, SCHEMA_VERSION as CURRENT_SCHEMA } from './migrations.js';
import { PostgresTaskStore } from './postgres-store.js';
import { parsePostgresUrl, type PostgresLocation } from './url.js';

export { parsePostgresUrl, DEFAULT_SCHEMA, type PostgresLocation } from './url.js';

// Declared here rather than re-exported, so that this entry's public types never mention pg:
// an app type-checks against them whether or not the driver and its types are installed.
/** The schema version this build migrates to. */
export const SCHEMA_VERSION: number = CURRENT_SCHEMA;

export type WarningSink = (message: string) => void;

export interface PostgresStoreOptions {
  /**
   * Tests only: a fake clock for expiry and leases. By default the database's clock, `now()`,
   * judges both, so processes with skewed clocks still agree.
   */
  clock?: Clock;
  /** Where connection warnings go. Default: `process.emitWarning`. */
  onWarning?: WarningSink;
  /** First-connection timeout. Default 5 s. */
  connectTimeoutMs?: number;
}

const defaultWarn: WarningSink = (message) => process.emitWarning(`taskrail: ${message}`);

/**
 * Opens the task store at `postgres://[user:pass@]host:port/db[?schema=NAME&pool=N]`: connects
 * (failing fast with STORE_UNAVAILABLE), applies missing migrations under an advisory lock, and
 * LISTENs on the schema's channel so this store re-emits every other process's writes.
 */
export async function openPostgresStore(
  url: string,
  options: PostgresStoreOptions = {},
): Promise<TaskStore> {
  const location = parsePostgresUrl(url);
  const pg = await loadPg();
  const warn = options.onWarning ?? defaultWarn;
  const description = `postgres task store ${location.safeUrl}`;
  const pool = createPool(pg, location, options.connectTimeoutMs ?? 5000, warn, description);
  const channel = `${location.schema}_events`;
  const origin = randomBytes(9).toString('base64url');
  const store = new PostgresTaskStore({
    pool,
    schema: quoteIdent(location.schema),
    channel,
    description,
    clock: options.clock,
    origin,
    onClose: () => listener.close(),
  });
  // Postgres renders the NOTIFY payload's JSON with spaces around the colon.
  const relay = new EventRelay(store, `{"o" : ${JSON.stringify(origin)},`, warn);
  const listener = new ChannelListener({
    pg,
    connectUrl: location.connectUrl,
    channel,
    description,
    onMessage: (payload) => relay.receive(payload),
    onReconnect: () => store.events.emit('store:resync', {}),
    warn,
  });
  try {
    await prepare(pg, location, options.connectTimeoutMs ?? 5000, description);
    await listener.start();
  } catch (error) {
    await store.close().catch(() => undefined);
    throw unavailable(error, description);
  }
  return store;
}

/**
 * A query with no reply after this fails as store trouble ("Query read timeout") and its
 * connection is dropped: over a link that silently drops packets the socket never errors, so
 * without it a request would hang until the link heals. Every store query is one short
 * statement; migrations, which may wait on another process's lock, use their own connection.
 */
const QUERY_TIMEOUT_MS = 10_000;

function createPool(
  pg: PgModule,
  location: PostgresLocation,
  connectTimeoutMs: number,
  warn: WarningSink,
  description: string,
): InstanceType<PgModule['Pool']> {
  const pool = new pg.Pool({
    connectionString: location.connectUrl,
    max: location.poolSize,
    connectionTimeoutMillis: connectTimeoutMs,
    idleTimeoutMillis: 30_000,
    query_timeout: QUERY_TIMEOUT_MS,
    // TCP keepalive lets the OS notice a dead peer on an idle pooled connection.
    keepAlive: true,
  });
  // An idle pooled connection that dies emits 'error'; unhandled, it would crash the process.
  // The pool replaces it on the next query.
  let reported = 0;
  pool.on('error', (error) => {
    if (Date.now() - reported < 10_000) return;
    reported = Date.now();
    warn(`${description}: an idle connection failed (${error.message})`);
  });
  return pool;
}

/** Migrates on a connection of its own, without the pool's query time-out. */
async function prepare(
  pg: PgModule,
  location: PostgresLocation,
  connectTimeoutMs: number,
  description: string,
): Promise<void> {
  const client = new pg.Client({
    connectionString: location.connectUrl,
    connectionTimeoutMillis: connectTimeoutMs,
  });
  client.on('error', () => undefined); // a failure also rejects the query in flight
  await client.connect();
  try {
    await migrate(client, location.schema, description);
  } finally {
    await client.end().catch(() => undefined);
  }
}

function unavailable(error: unknown, description: string): unknown {
  const mapped = storeError(error, description);
  if (mapped !== error || error instanceof TaskrailError) return mapped;
  const message = error instanceof Error ? error.message : String(error);
  return new TaskrailError('STORE_UNAVAILABLE', `cannot open the ${description}: ${message}`, {
    cause: error,
  });
}
