import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { isClientError, TaskrailClient } from '../../src/client/index.js';
import type { TaskServer } from '../../src/server/index.js';
import { serveTaskServerStdio } from '../../src/server/stdio.js';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import { waitFor } from '../helpers/wait.js';
import { client2025 } from '../wire-2025/fixture.js';
import { tempDir } from '../stores/temp-dir.js';
import { StdioPeer } from './stdio-peer.js';
import { rpc, TASKS_CAPS } from './support.js';
import {
  assertSafe,
  assertTroubleError,
  CapturingLogger,
  executions,
  troubleServer,
} from './trouble-support.js';

/**
 * Another process holds the SQLite write lock (a second connection in BEGIN IMMEDIATE, as a
 * backup tool or a stuck writer would): every wire answers the retryable -32603, never a tool
 * result, and never with the file's path.
 */
describe('store trouble: SQLite write lock held by another connection', () => {
  const dir = tempDir('taskrail-lock-');
  const file = join(dir.path, 'tasks.db');
  const logger = new CapturingLogger();
  let store: SqliteTaskStore;
  let app: TaskServer;
  let url: string;
  let holder: Database.Database;

  const lock = () => holder.exec('BEGIN IMMEDIATE');
  const unlock = () => holder.inTransaction && holder.exec('ROLLBACK');
  const troubleAnswers = () => app.instanceDeps.trouble?.answered ?? 0;
  const taskCount = async () => (await store.list({ limit: 1000 })).tasks.length;

  before(async () => {
    store = new SqliteTaskStore(file, { busyTimeoutMs: 100 });
    app = troubleServer(store, logger);
    ({ url } = await app.listen(0));
    holder = new Database(file);
  });
  beforeEach(() => unlock());
  after(async () => {
    unlock();
    holder.close();
    await app.close(1000);
    await store.close();
    dir.remove();
  });

  it('answers a create on the fast path with HTTP 503 and -32603, logging the detail once', async () => {
    const before = { tasks: await taskCount(), runs: executions.count, logs: logger.lines.length };
    lock();
    const reply = await rpc(url, 'tools/call', { name: 'quick', arguments: {} });
    unlock();
    assert.equal(reply.status, 503);
    assertTroubleError(reply.body.error);
    assert.equal(reply.body.result, undefined, 'never a tool result');
    assertSafe(JSON.stringify(reply.body), [dir.path, 'SQLITE']);
    assert.equal(await taskCount(), before.tasks);
    assert.equal(executions.count, before.runs, 'no handler ran');
    const logged = logger.troubleLines().slice(-1)[0];
    assert.equal(logger.troubleLines().length, 1);
    assert.match(String(logged?.fields['error']), /locked/);
    assert.match(String(logged?.fields['error']), /SQLITE_BUSY/, 'the log keeps the driver detail');
    assert.ok(logger.lines.length > before.logs);
  });

  it('answers a create on the SDK path (beforeTask hook) with HTTP 503 and -32603', async () => {
    lock();
    const reply = await rpc(url, 'tools/call', { name: 'hooked', arguments: {} });
    unlock();
    assert.equal(reply.status, 503);
    assertTroubleError(reply.body.error);
    assertSafe(JSON.stringify(reply.body), [dir.path]);
  });

  it('answers a host without tasks (the inline path) with HTTP 503 and -32603, never a tool result', async () => {
    const runs = executions.count;
    lock();
    const reply = await rpc(url, 'tools/call', { name: 'quick', arguments: {} }, { caps: {} });
    unlock();
    assert.equal(reply.status, 503, JSON.stringify(reply.body));
    assertTroubleError(reply.body.error);
    assert.equal(reply.body.result, undefined, 'never a tool result');
    assertSafe(JSON.stringify(reply.body), [dir.path]);
    assert.equal(executions.count, runs, 'no handler ran');
  });

  it('answers tasks/cancel under the lock with 503 and cancels once the lock is gone', async () => {
    const reply = await rpc(url, 'tools/call', { name: 'quick', arguments: {} });
    const taskId = reply.body.result?.['taskId'] as string;
    await waitFor('the task to end', async () => (await store.get(taskId))?.status === 'completed');
    lock();
    const cancel = await rpc(url, 'tasks/cancel', { taskId });
    const get = await rpc(url, 'tasks/get', { taskId });
    unlock();
    // A completed task needs no write to be "cancelled" (a no-op), so either answer is honest;
    // what matters is that a failed write never reads as the task's answer.
    if (cancel.status !== 200) {
      assert.equal(cancel.status, 503);
      assertTroubleError(cancel.body.error);
    }
    assert.equal(get.status, 200, 'reads go on under a write lock (WAL)');
    assert.equal(get.body.result?.['status'], 'completed');
  });

  it('answers a 2025-11-25 session create with -32603 and the fixed message', async () => {
    const client = await client2025(url);
    try {
      lock();
      const attempt = client.request(
        { method: 'tools/call', params: { name: 'quick', arguments: {}, task: { ttl: 60_000 } } },
        CallToolResultSchema,
      );
      await assert.rejects(attempt, (error: unknown) => {
        assert.ok(error instanceof McpError, String(error));
        assertTroubleError({
          code: error.code,
          message: error.message.replace(/^MCP error -?\d+: /, ''),
        });
        assertSafe(error.message, [dir.path]);
        return true;
      });
    } finally {
      unlock();
      await client.close();
    }
  });

  it('answers a stdio create with -32603 and the fixed message', async () => {
    const peer = new StdioPeer();
    const handle = serveTaskServerStdio(app, undefined, peer.transport);
    try {
      lock();
      for (const name of ['quick', 'hooked']) {
        const reply = await peer.request('tools/call', { name, arguments: {} }, TASKS_CAPS);
        assertTroubleError(reply.error);
        assertSafe(JSON.stringify(reply), [dir.path]);
      }
    } finally {
      unlock();
      await handle.close();
    }
  });

  it('a keyed create whose store trouble outlasts the grace stays pending, never a failed outcome', async () => {
    const client = new TaskrailClient({
      url,
      home: join(dir.path, 'home-grace'),
      push: false,
      connectionGraceMs: 300,
    });
    const before = { tasks: await taskCount(), runs: executions.count };
    lock();
    try {
      await assert.rejects(
        client.callTool('quick', {}, { idempotencyKey: 'lock-outlasts-grace' }),
        (error: unknown) => isClientError(error, 'CONNECTION') && /task store/.test(String(error)),
      );
      assert.deepEqual(
        client.ledger.pending(url).map((call) => call.key),
        ['lock-outlasts-grace'],
        'the call stays pending for resume()',
      );
      unlock();
      const [resent] = await client.resume();
      assert.ok(resent?.taskId !== undefined, 'resume() made the task');
      assert.equal((await resent.result()).kind, 'completed');
      assert.equal(await taskCount(), before.tasks + 1, 'exactly one task');
      assert.equal(executions.count, before.runs + 1, 'the tool ran once');
      assert.deepEqual(client.ledger.pending(url), []);
    } finally {
      unlock();
      client.close();
    }
  });

  it('the client library retries a keyed create through the lock and gets one task', async () => {
    const client = new TaskrailClient({ url, home: join(dir.path, 'home'), push: false });
    const before = { tasks: await taskCount(), troubles: troubleAnswers() };
    lock();
    try {
      const call = client.callTool('quick', {}, { idempotencyKey: 'lock-retry-1' });
      await waitFor('a create answered with 503', () => troubleAnswers() > before.troubles);
      unlock();
      const made = await call;
      assert.ok(made.taskId !== undefined, 'the retried create made its task');
      assert.equal(await taskCount(), before.tasks + 1, 'exactly one task');
      assert.equal((await made.result()).kind, 'completed');
    } finally {
      unlock();
      client.close();
    }
  });
});
