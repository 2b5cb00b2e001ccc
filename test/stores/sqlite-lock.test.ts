import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { nextSweepBatch } from '../../src/runtime/expiry-sweep.js';
import { TaskRuntime } from '../../src/runtime/runtime.js';
import { createTaskServer, type TaskServer } from '../../src/server/index.js';
import registerDemo from '../../src/server/tools/demo.js';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import { newTaskId } from '../../src/task/ids.js';
import { newTaskRecord } from '../../src/task/record.js';
import { startNode } from '../helpers/child.js';
import { createTask, waitForStatus } from '../server/support.js';

const here = dirname(fileURLToPath(import.meta.url));
const silent = { info() {}, warn() {}, error() {} };

describe('SQLite lock waits do not block the event loop', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'taskrail-lock-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('answers other clients while another process holds the write lock', async () => {
    const path = join(dir, 'tasks.db');
    const store = new SqliteTaskStore(path);
    const app: TaskServer = createTaskServer({
      store,
      name: 'test',
      version: '1.0.0',
      runtime: { logger: silent },
    });
    registerDemo(app);
    const { url } = await app.listen(0, '127.0.0.1');
    try {
      const readable = await createTask(url, 'slow_compute', { seconds: 60 });
      const victim = await createTask(url, 'slow_compute', { seconds: 60 });
      await waitForStatus(url, victim, ['working']);
      const holder = startNode(join(here, '../fixtures/lock-holder.js'), [
        path,
        url,
        readable,
        '1800',
      ]);
      await holder.line(/^locked$/);
      // A write that meets the lock: it must wait without holding the thread.
      const principal = 'anonymous';
      const cancelled = app.runtime.cancelTask(victim, principal);
      const [report] = await holder.line(/^\{.*\}$/, 15_000);
      const { answered, timedOut } = JSON.parse(report) as { answered: number; timedOut: number };
      assert.ok(
        answered >= 2,
        `tasks/get answered during the lock: ${answered} (${timedOut} timed out)`,
      );
      const after = await cancelled;
      assert.equal(after?.status, 'cancelled', 'the write went through once the lock was free');
    } finally {
      await app.close(1000);
      await store.close();
    }
  });
});

describe('the TTL sweeper yields between batches', () => {
  it('lets a timer run between batches of a large sweep', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'taskrail-sweep-'));
    const store = new SqliteTaskStore(join(dir, 'tasks.db'));
    const runtime = new TaskRuntime({ store, tools: { get: () => undefined }, logger: silent });
    try {
      const past = Date.now() - 10_000;
      for (let i = 0; i < 2000; i += 1) {
        const record = newTaskRecord(
          {
            id: newTaskId(),
            principal: 'p',
            tool: 't',
            arguments: {},
            ttlMs: 1000,
            pollIntervalMs: 1000,
          },
          past,
        );
        await store.create(record);
      }
      let ticks = 0;
      const timer = setInterval(() => (ticks += 1), 0);
      const deleted = await runtime.sweepNow();
      clearInterval(timer);
      assert.equal(deleted, 2000);
      assert.ok(ticks >= 2, `a timer ran between the 4 batches (${ticks} times)`);
    } finally {
      await runtime.stop();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('sweep batches follow their time budget', () => {
  it('shrinks a batch that took too long and grows one that was quick, within bounds', () => {
    assert.equal(nextSweepBatch(500, 16), 250, 'twice the budget halves the batch');
    assert.equal(nextSweepBatch(500, 200), 250, 'never shrinks more than 2x in one step');
    assert.equal(nextSweepBatch(500, 4), 1000, 'half the budget doubles the batch');
    assert.equal(nextSweepBatch(1600, 0), 2000, 'never above the ceiling');
    assert.equal(nextSweepBatch(20, 1000), 16, 'never below the floor');
  });
});
