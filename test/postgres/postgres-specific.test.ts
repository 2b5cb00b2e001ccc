import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { TaskStore } from '../../src/store/port.js';
import { openStore } from '../../src/stores/open.js';
import {
  openPostgresStore,
  parsePostgresUrl,
  SCHEMA_VERSION,
} from '../../src/stores/postgres/index.js';
import { PostgresTaskStore } from '../../src/stores/postgres/postgres-store.js';
import { newTaskId } from '../../src/task/ids.js';
import { newTaskRecord } from '../../src/task/record.js';
import { EventRelay } from '../../src/stores/shared/event-relay.js';
import { complete, report } from '../../src/task/transitions.js';
import { waitFor } from '../helpers/wait.js';
import {
  dropSchema,
  POSTGRES_URL,
  skipWithoutPostgres,
  sql,
  uniqueSchema,
  urlWithSchema,
} from './postgres-env.js';

const record = (now = Date.now(), overrides = {}) =>
  newTaskRecord(
    {
      id: newTaskId(),
      principal: 'alice',
      tool: 'slow_compute',
      arguments: { secret: 'argument-text' },
      ttlMs: 3_600_000,
      pollIntervalMs: 500,
      ...overrides,
    },
    now,
  );

const dbNowMs = async () =>
  Number((await sql<{ ms: number }>('SELECT extract(epoch FROM now()) * 1000 AS ms'))[0]?.ms);

describe('postgres store URLs', () => {
  it('parses the schema and pool size, and keeps credentials out of the description', () => {
    const location = parsePostgresUrl('postgres://bob:s3cret@db:5433/app?schema=tr_1&pool=4');
    assert.equal(location.schema, 'tr_1');
    assert.equal(location.poolSize, 4);
    assert.equal(location.connectUrl, 'postgres://bob:s3cret@db:5433/app');
    assert.equal(location.safeUrl, 'postgres://db:5433/app?schema=tr_1');
    assert.equal(parsePostgresUrl('postgresql://db/app').schema, 'taskrail');
  });

  it('refuses a schema or pool size it cannot use, saying what to write instead', () => {
    assert.throws(() => parsePostgresUrl('postgres://db/app?schema=Bad-Name'), /lower-case/);
    assert.throws(() => parsePostgresUrl('postgres://db/app?schema=x";drop'), { code: 'CONFIG' });
    assert.throws(() => parsePostgresUrl('postgres://db/app?pool=0'), /1 to 1000/);
    assert.throws(() => parsePostgresUrl('postgres://:x@'), { code: 'CONFIG' });
  });

  it('fails fast with STORE_UNAVAILABLE when nothing listens at the address', async () => {
    await assert.rejects(
      openStore('postgres://postgres@127.0.0.1:1/test?schema=nowhere'),
      (error: Error & { code?: string }) =>
        error.code === 'STORE_UNAVAILABLE' && /127\.0\.0\.1:1/.test(error.message),
    );
  });

  it("names the package to install when 'pg' is missing", () => {
    const open = fileURLToPath(new URL('../../src/stores/open.js', import.meta.url));
    const hide = `data:text/javascript,export async function resolve(s,c,n){if(s==='pg'){const e=new Error("Cannot find package 'pg' imported from here");e.code='ERR_MODULE_NOT_FOUND';throw e}return n(s,c)}`;
    const script =
      `import { register } from 'node:module'; register(${JSON.stringify(hide)});` +
      `const { openStore } = await import(${JSON.stringify(open)});` +
      `await openStore('postgres://127.0.0.1/x').catch((e) => { console.log(e.code, e.message); });`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    assert.equal(run.status, 0, run.stderr);
    assert.match(
      run.stdout,
      /^CONFIG a postgres:\/\/ store needs the pg package: npm install pg$/m,
    );
  });
});

if (!skipWithoutPostgres('postgres-specific behaviour')) {
  describe('postgres-specific behaviour', () => {
    const schemas: string[] = [];
    const stores: TaskStore[] = [];
    const fresh = async (): Promise<{ store: TaskStore; schema: string; url: string }> => {
      const schema = uniqueSchema();
      schemas.push(schema);
      const url = urlWithSchema(schema);
      const store = await openPostgresStore(url);
      stores.push(store);
      return { store, schema, url };
    };
    after(async () => {
      for (const store of stores) await store.close();
      for (const schema of schemas) await dropSchema(schema);
    });

    it('opens through openStore for postgres:// and postgresql:// URLs', async () => {
      const { url } = await fresh();
      const store = await openStore(url.replace(/^postgres:/, 'postgresql:'));
      stores.push(store);
      assert.ok(store instanceof PostgresTaskStore);
      assert.doesNotMatch(store.description, /postgres@/);
    });

    it('judges leases by the database clock, not the caller’s', async () => {
      const { store } = await fresh();
      const task = (await store.create(record())).task;
      const realNow = Date.now;
      const before = await dbNowMs();
      Date.now = () => realNow() + 86_400_000; // this process's clock runs a day ahead
      let grant;
      try {
        grant = await store.claim(task.id, 'w1', 60_000);
      } finally {
        Date.now = realNow;
      }
      const afterMs = await dbNowMs();
      assert.ok(grant !== undefined);
      const takenAt = grant.expiresAt - 60_000;
      assert.ok(takenAt >= before - 1 && takenAt <= afterMs + 1, `lease taken at ${takenAt}`);
    });

    it('a claim to run returns the task and its steps in the claiming statement', async () => {
      const { store } = await fresh();
      const bare = (await store.create(record())).task;
      const bareGrant = await store.claim(bare.id, 'w1', 60_000, { load: true });
      assert.deepEqual(bareGrant?.loaded, { task: await store.get(bare.id), steps: {} });
      const task = (await store.create(record())).task;
      await store.saveStep(task.id, 'fetch', { rows: [1, 2], note: 'ü ✓', none: null });
      await store.saveStep(task.id, 'count', 3);
      const grant = await store.claim(task.id, 'w1', 60_000, { load: true });
      const steps = { fetch: { rows: [1, 2], note: 'ü ✓', none: null }, count: 3 };
      assert.deepEqual(grant?.loaded, { task: await store.get(task.id), steps });
      // A take-over to run loads too; a plain claim leaves the grant as small as before.
      const taken = await store.claim(task.id, 'w2', 60_000, { takeOverFrom: 'w1', load: true });
      assert.equal(taken?.interrupted, true);
      assert.deepEqual(taken?.loaded?.steps, steps);
      await store.releaseLease(task.id, taken?.token ?? '');
      assert.equal((await store.claim(task.id, 'w3', 60_000))?.loaded, undefined);
    });

    it('judges expiry by the database clock', async () => {
      const { store } = await fresh();
      const now = await dbNowMs();
      // Made by a caller whose clock is an hour behind: by the database clock it has expired.
      const late = record(now - 3_600_000 - 5_000, { ttlMs: 3_600_000 });
      await store.create(late);
      assert.equal(await store.get(late.id), undefined);
      assert.deepEqual(await store.sweepExpired(10), [late.id]);
    });

    it('applies migrations once when several processes open a new schema at once', async () => {
      const schema = uniqueSchema();
      schemas.push(schema);
      const opened = await Promise.all(
        Array.from({ length: 4 }, () => openPostgresStore(urlWithSchema(schema))),
      );
      stores.push(...opened);
      const rows = await sql<{ version: number }>(
        `SELECT version FROM "${schema}".schema_migrations ORDER BY version`,
      );
      assert.deepEqual(
        rows.map((row) => row.version),
        Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1),
      );
    });

    it('refuses a schema migrated by a newer taskrail, saying what to do', async () => {
      const { schema, url } = await fresh();
      await sql(`INSERT INTO "${schema}".schema_migrations (version) VALUES (999)`);
      await assert.rejects(openPostgresStore(url), /newer than this taskrail knows.*upgrade/);
    });

    it('notifies other processes with ids and statuses only, never arguments or results', async () => {
      const { store, schema } = await fresh();
      const listener = new pg.Client({ connectionString: POSTGRES_URL });
      await listener.connect();
      const payloads: string[] = [];
      listener.on('notification', (message) => payloads.push(message.payload ?? ''));
      await listener.query(`LISTEN "${schema}_events"`);
      try {
        const task = (await store.create(record())).task;
        const done = complete(task, { content: [{ type: 'text', text: 'result-text' }] }, 1);
        assert.equal((await store.compareAndSet(done, task.revision)).ok, true);
        await waitFor('two notifications', () => payloads.length >= 2);
        for (const payload of payloads) {
          assert.doesNotMatch(payload, /argument-text|result-text/);
          assert.ok(Buffer.byteLength(payload) < 200, payload);
        }
        assert.deepEqual(
          payloads.map((p) => (JSON.parse(p) as { k: string }).k),
          ['c', 'w'],
        );
      } finally {
        await listener.end();
      }
    });

    it('re-emits another process’s writes as events, read back from the database', async () => {
      const { store, url } = await fresh();
      const other = await openPostgresStore(url);
      stores.push(other);
      const seen: string[] = [];
      store.events.on('task:transition', ({ task, to }) => seen.push(`${task.id} ${to}`));
      const task = (await other.create(record())).task;
      const done = complete(task, { content: [] }, 1);
      await other.compareAndSet(done, task.revision);
      await waitFor('the transition from the other store', () => seen.length === 1);
      assert.deepEqual(seen, [`${task.id} completed`]);
    });

    it('relays a write read back after a later one once, never as a second transition', async () => {
      const { store, schema } = await fresh();
      const listener = new pg.Client({ connectionString: POSTGRES_URL });
      await listener.connect();
      const payloads: string[] = [];
      listener.on('notification', (message) => payloads.push(message.payload ?? ''));
      await listener.query(`LISTEN "${schema}_events"`);
      try {
        // A progress write, then the terminal write: both committed before the first notice is
        // read back, as when the relay falls behind a busy writer.
        const task = (await store.create(record())).task;
        const progressed = report(task, 'half way', Date.now());
        assert.equal((await store.compareAndSet(progressed, task.revision)).ok, true);
        const done = complete(progressed, { content: [] }, Date.now());
        assert.equal((await store.compareAndSet(done, progressed.revision)).ok, true);
        const sentinel = (await store.create(record())).task;
        const closed = complete(sentinel, { content: [] }, Date.now());
        assert.equal((await store.compareAndSet(closed, sentinel.revision)).ok, true);
        await waitFor('five notifications', () => payloads.length >= 5);
        const seen: string[] = [];
        store.events.on('task:transition', ({ task: t, from, to }) =>
          seen.push(`${t.id} ${from}>${to}`),
        );
        // The store's own relay skips its own writes; this one relays them as another process
        // would, in commit order, the sentinel last.
        const relay = new EventRelay(store, '{"o" : "another-process",', () => undefined);
        for (const payload of payloads) relay.receive(payload);
        await waitFor('the sentinel relayed', () =>
          seen.some((line) => line.startsWith(sentinel.id)),
        );
        assert.deepEqual(
          seen,
          [`${task.id} working>completed`, `${sentinel.id} working>completed`],
          'one transition per task, none doubled',
        );
      } finally {
        await listener.end();
      }
    });

    it('reports a connection dropped mid-query as STORE_UNAVAILABLE, then works again', async () => {
      const schema = uniqueSchema();
      schemas.push(schema);
      const app = `victim_${schema}`;
      const store = await openPostgresStore(`${urlWithSchema(schema)}&application_name=${app}`);
      stores.push(store);
      const task = (await store.create(record())).task;
      const locker = new pg.Client({ connectionString: POSTGRES_URL });
      await locker.connect();
      try {
        // Hold a lock so the store's read waits inside the server, then kill its connection.
        await locker.query('BEGIN');
        await locker.query(`LOCK TABLE "${schema}".tasks IN ACCESS EXCLUSIVE MODE`);
        const reading = store.get(task.id).then(
          () => undefined,
          (error: unknown) => error,
        );
        await waitFor('the read to wait on the lock', async () => {
          const rows = await sql(
            "SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'",
            [app],
          );
          return rows.length > 0;
        });
        await sql(
          'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1',
          [app],
        );
        assert.equal(((await reading) as { code?: string } | undefined)?.code, 'STORE_UNAVAILABLE');
      } finally {
        await locker.query('ROLLBACK');
        await locker.end();
      }
      assert.equal((await store.get(task.id))?.id, task.id);
    });
  });
}
