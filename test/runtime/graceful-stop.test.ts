import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TaskRuntime } from '../../src/runtime/runtime.js';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import type { TaskRecord } from '../../src/task/record.js';
import { isTerminal } from '../../src/task/status.js';
import { waitFor } from '../helpers/wait.js';
import { TestTools, abortable, text } from './tools.js';

const logged: string[] = [];
const logger = {
  info: (m: string) => logged.push(m),
  warn: (m: string) => logged.push(m),
  error: (m: string) => logged.push(m),
};

/** Runs until its signal is aborted, unless `finishes` resolves first. */
function tools(): TestTools {
  return new TestTools()
    .add('transfer', (_args, ctx) => abortable(ctx.signal), { mode: 'optional', retry: false })
    .add('reindex', async (_args, ctx) => {
      if (ctx.attempt === 1) return abortable(ctx.signal);
      return text(`attempt ${ctx.attempt}`);
    });
}

describe('a graceful stop that gives up on a handler', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'taskrail-stop-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  async function stopMidRun(path: string, tool: string, catalog: TestTools): Promise<TaskRecord> {
    const store = new SqliteTaskStore(path);
    const first = new TaskRuntime({ store, tools: catalog, logger, leaseMs: 60_000 });
    const task = await first.createTask({ tool, arguments: {}, principal: 'alice' });
    await waitFor('the handler to start', () => catalog.calls.get(tool) === 1);
    await first.stop(50);
    await store.close();
    return task;
  }

  async function restartAndSettle(path: string, catalog: TestTools, task: TaskRecord) {
    const store = new SqliteTaskStore(path);
    const second = new TaskRuntime({ store, tools: catalog, logger, leaseMs: 60_000 });
    second.start();
    try {
      return await waitFor('the restarted runtime to settle the task', async () => {
        const current = await second.getTask(task.id, 'alice');
        return current !== undefined && isTerminal(current.status) ? current : undefined;
      });
    } finally {
      await second.stop(1000);
      await store.close();
    }
  }

  it('hands a retry:false task back as interrupted: it fails instead of running twice', async () => {
    const catalog = tools();
    const path = join(dir, 'transfer.db');
    const task = await stopMidRun(path, 'transfer', catalog);
    assert.ok(
      logged.some((line) => line.includes('graceful stop')),
      `says what happened: ${logged.join(' | ')}`,
    );
    assert.ok(!logged.some((line) => line.includes('after cancellation')));
    const done = await restartAndSettle(path, catalog, task);
    assert.equal(done.status, 'failed');
    assert.match(done.error?.message ?? '', /interrupted/);
    assert.equal(catalog.calls.get('transfer'), 1, 'the tool ran once');
  });

  it('re-runs a retryable task as a new attempt, without waiting out the lease', async () => {
    const catalog = tools();
    const path = join(dir, 'reindex.db');
    const task = await stopMidRun(path, 'reindex', catalog);
    const done = await restartAndSettle(path, catalog, task);
    assert.equal(done.status, 'completed');
    assert.deepEqual(done.result, text('attempt 2'));
    assert.equal(done.attempt, 2);
  });
});
