import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TaskServer } from '../../src/server/index.js';
import type { TaskStore } from '../../src/store/port.js';
import { openPostgresStore } from '../../src/stores/postgres/index.js';
import { ownPostgresMissing, startOwnPostgres, type OwnPostgres } from '../helpers/own-postgres.js';
import { waitFor } from '../helpers/wait.js';
import { makeKey, TestAuthServer, type TestKey } from '../oauth/auth-server.js';
import { rpc } from './support.js';
import {
  assertSafe,
  assertTroubleError,
  CapturingLogger,
  executions,
  troubleServer,
} from './trouble-support.js';

const skip = ownPostgresMissing() ?? false;
if (skip !== false) process.stdout.write(`# skipping the Postgres outage suite: ${skip}\n`);

/**
 * Our own PostgreSQL server, crashed under two running taskrail servers (one anonymous, one
 * behind OAuth): every request answers the retryable 503 -32603 without the database's address,
 * an OAuth caller still gets 401 before the store is touched, and both recover.
 */
describe('store trouble: the PostgreSQL server goes away', { skip }, () => {
  const logger = new CapturingLogger();
  let db: OwnPostgres;
  let store: TaskStore;
  let open: { app: TaskServer; url: string };
  let guarded: { app: TaskServer; url: string };
  let auth: TestAuthServer;
  let key: TestKey;

  const secrets = () => [String(db.port), 'postgres://', '127.0.0.1', 'ECONNREFUSED', 'pg-pool'];

  before(async () => {
    db = await startOwnPostgres();
    store = await openPostgresStore(`${db.url}?schema=trouble`, { onWarning: () => undefined });
    key = await makeKey('k1', 'ES256');
    auth = await new TestAuthServer().start(key);
    const plain = troubleServer(store, logger);
    open = { app: plain, url: (await plain.listen(0)).url };
    const oauth = troubleServer(store, logger, { oauth: { issuer: auth.issuer } });
    guarded = { app: oauth, url: (await oauth.listen(0)).url };
  });
  after(async () => {
    await open.app.close(1000);
    await guarded.app.close(1000);
    await store.close();
    await auth.close();
    await db.remove();
  });

  it('answers creates on both paths and tasks/get with 503 -32603, then recovers', async () => {
    const made = await rpc(open.url, 'tools/call', { name: 'quick', arguments: {} });
    const taskId = made.body.result?.['taskId'] as string;
    assert.equal(typeof taskId, 'string', JSON.stringify(made.body));
    await waitFor('the first task to finish', async () => {
      return (await store.get(taskId))?.status === 'completed';
    });
    const runs = executions.count;
    await db.stop();
    try {
      for (const [method, params] of [
        ['tools/call', { name: 'quick', arguments: {} }],
        ['tools/call', { name: 'hooked', arguments: {} }],
        ['tasks/get', { taskId }],
      ] as const) {
        const reply = await rpc(open.url, method, params);
        assert.equal(reply.status, 503, `${method}: ${JSON.stringify(reply.body)}`);
        assertTroubleError(reply.body.error);
        assert.equal(reply.body.result, undefined, 'never a tool result');
        assertSafe(JSON.stringify(reply.body), secrets());
      }
      assert.equal(executions.count, runs, 'no handler ran for a create that failed');
      const logged = logger.troubleLines();
      assert.ok(logged.length >= 1, 'the detail went to the log');
      assert.match(String(logged[0]?.fields['error']), /STORE_UNAVAILABLE|unreachable/);
    } finally {
      await db.start();
    }
    const again = await waitFor('a create after PostgreSQL is back', async () => {
      const reply = await rpc(open.url, 'tools/call', { name: 'quick', arguments: {} });
      return reply.status === 200 ? reply : undefined;
    });
    const second = again.body.result?.['taskId'] as string;
    await waitFor('the task made after recovery to finish', async () => {
      return (await store.get(second))?.status === 'completed';
    });
  });

  it('answers an OAuth caller 503 -32603 (not 401, not a tool result) while the store is down', async () => {
    const alice = await auth.token(key, { sub: 'alice' }, guarded.url);
    const made = await rpc(
      guarded.url,
      'tools/call',
      { name: 'quick', arguments: {} },
      {
        bearer: alice,
      },
    );
    const taskId = made.body.result?.['taskId'] as string;
    assert.equal(typeof taskId, 'string', JSON.stringify(made.body));
    await db.stop();
    try {
      const anonymous = await rpc(guarded.url, 'tools/call', { name: 'quick', arguments: {} });
      assert.equal(anonymous.status, 401, 'the token check comes before the store');
      for (const [method, params] of [
        ['tools/call', { name: 'quick', arguments: {} }],
        ['tools/call', { name: 'hooked', arguments: {} }],
        ['tasks/get', { taskId }],
        ['tasks/cancel', { taskId }],
      ] as const) {
        const reply = await rpc(guarded.url, method, params, { bearer: alice });
        assert.equal(reply.status, 503, `${method}: ${JSON.stringify(reply.body)}`);
        assertTroubleError(reply.body.error);
        assertSafe(JSON.stringify(reply.body), [...secrets(), 'alice']);
      }
    } finally {
      await db.start();
    }
    const seen = await waitFor('alice reads her task after recovery', async () => {
      const reply = await rpc(guarded.url, 'tasks/get', { taskId }, { bearer: alice });
      return reply.status === 200 ? reply : undefined;
    });
    assert.equal(seen.body.result?.['taskId'], taskId);
  });
});
