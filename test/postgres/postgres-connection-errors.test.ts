import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createGraphileExecutor } from '../../src/executors/graphile-worker/index.js';
import { storeError } from '../../src/stores/postgres/errors.js';
import { isStoreUnavailable } from '../../src/task/errors.js';
import { POSTGRES_URL, skipWithoutPostgres, uniqueSchema, urlWithSchema } from './postgres-env.js';

/** A TCP server on 127.0.0.1 that does `onSocket` to every connection. */
async function server(onSocket: (socket: net.Socket) => void): Promise<net.Server> {
  const listening = net.createServer((socket) => {
    socket.on('error', () => undefined);
    onSocket(socket);
  });
  await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
  return listening;
}

const portOf = (s: net.Server) => (s.address() as net.AddressInfo).port;
const urlAt = (port: number) => `postgres://postgres@127.0.0.1:${port}/test`;

/** What a failure becomes in the store: it must be store trouble, with the driver's message. */
async function classified(failing: Promise<unknown>, message: RegExp): Promise<void> {
  const raw = await failing.then(
    () => assert.fail('expected the driver to fail'),
    (error: unknown) => error,
  );
  assert.match(String((raw as Error).message ?? raw), message);
  const mapped = storeError(raw, 'db');
  assert.ok(isStoreUnavailable(mapped), `not store trouble: ${String(raw)}`);
}

/**
 * Every connection-level failure of pg, pg-pool and graphile-worker, produced for real, is
 * store trouble (the runtime retries it and never reports it as the tool's outcome).
 */
if (!skipWithoutPostgres('postgres connection failures, produced for real')) {
  describe('postgres connection failures, produced for real', () => {
    const sockets: net.Socket[] = [];
    let silent: net.Server; // accepts and never answers (a blackholed database)
    let slammer: net.Server; // accepts, then drops the connection
    let closedPort: number;
    before(async () => {
      silent = await server((socket) => sockets.push(socket));
      slammer = await server((socket) => socket.destroy());
      const probe = await server(() => undefined);
      closedPort = portOf(probe);
      await new Promise<void>((resolve) => probe.close(() => resolve()));
    });
    after(async () => {
      for (const socket of sockets) socket.destroy();
      await Promise.all([silent, slammer].map((s) => new Promise((r) => s.close(r))));
    });

    it('pg-pool: a silent server times out the connect and the queued request', async () => {
      const pool = new pg.Pool({
        connectionString: urlAt(portOf(silent)),
        max: 1,
        connectionTimeoutMillis: 300,
      });
      try {
        const connecting = pool.query('SELECT 1');
        const queued = pool.query('SELECT 1'); // waits for the pool's one connection
        // Both time out together: awaiting one first left the other's rejection unhandled.
        await Promise.all([
          classified(connecting, /^Connection terminated due to connection timeout/),
          classified(queued, /^timeout exceeded when trying to connect$/),
        ]);
      } finally {
        await pool.end().catch(() => undefined);
      }
    });

    it('pg: a closed port refuses the connection', async () => {
      await classified(new pg.Client(urlAt(closedPort)).connect(), /ECONNREFUSED/);
    });

    it('pg: a server that drops the connection terminates it', async () => {
      const client = new pg.Client(urlAt(portOf(slammer)));
      client.on('error', () => undefined);
      await classified(client.connect(), /^Connection terminated unexpectedly$/);
    });

    it('pg: a query that outlives query_timeout', async () => {
      const client = new pg.Client({ connectionString: POSTGRES_URL, query_timeout: 50 });
      client.on('error', () => undefined);
      await client.connect();
      try {
        await classified(client.query('SELECT pg_sleep(2)'), /^Query read timeout$/);
      } finally {
        await client.end().catch(() => undefined);
      }
    });

    it('pg: a client that was closed, and pg-pool: a pool that was ended', async () => {
      const client = new pg.Client(POSTGRES_URL);
      await client.connect();
      await client.end();
      await classified(client.query('SELECT 1'), /^Client was closed and is not queryable$/);
      const pool = new pg.Pool({ connectionString: POSTGRES_URL });
      await pool.end();
      await classified(pool.query('SELECT 1'), /^Cannot use a pool after calling end/);
    });

    it('graphile-worker: adding a job while its database is unreachable is store trouble', async () => {
      const url = new URL(urlWithSchema(uniqueSchema()));
      url.port = String(closedPort);
      const executor = createGraphileExecutor({ connectionUrl: url.toString(), mode: 'dispatch' });
      try {
        const failure = await executor.dispatch('a-task').then(
          () => assert.fail('expected dispatch to fail'),
          (error: unknown) => error,
        );
        assert.ok(isStoreUnavailable(failure), String(failure));
        assert.match(String((failure as Error).message), /graphile-worker job queue/);
      } finally {
        await executor.stop(1000);
      }
    });
  });
}
