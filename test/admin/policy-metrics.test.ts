import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createTaskServer, type TaskServer } from '../../src/server/app.js';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import { newTaskId } from '../../src/task/ids.js';
import { newTaskRecord } from '../../src/task/record.js';
import { waitFor } from '../helpers/wait.js';
import { parsePrometheusText, valueOf, type Sample } from './prom-text.js';

const ADMIN = 'metrics-admin-token';
/** A principal's name that must never show up in /metrics. */
const PRINCIPAL = 'carol-from-accounting';
const text = (value: string) => ({ content: [{ type: 'text', text: value }] });
const never = (signal: AbortSignal) =>
  new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));

function registerPolicyTools(app: TaskServer): void {
  app.tool(
    'limited',
    { description: 'never ends in time', task: { mode: 'optional', timeoutMs: 150, retry: false } },
    (_args, ctx) => never(ctx.signal),
  );
  app.tool(
    'flaky',
    {
      description: 'fails twice',
      task: { mode: 'optional', retry: { maxAttempts: 3, onError: true, backoffMs: 50 } },
    },
    (_args, ctx) => {
      if (ctx.attempt < 3) throw new Error(`503 on attempt ${ctx.attempt}`);
      return text('third time');
    },
  );
  app.tool(
    'slow_once',
    {
      description: 'times out once, then answers',
      task: {
        mode: 'optional',
        timeoutMs: 150,
        retry: { maxAttempts: 2, onError: true, backoffMs: 50 },
      },
    },
    (_args, ctx) => (ctx.attempt === 1 ? never(ctx.signal) : text('second time')),
  );
  app.tool('napper', { description: 'sleeps once', task: true }, async (_args, ctx) => {
    await ctx.sleep(100);
    return text('rested');
  });
  app.tool('quick', { description: 'answers at once', task: true }, () => text('done'));
  app.tool(
    'one_per_caller',
    {
      description: 'one at a time per caller',
      task: { mode: 'optional', concurrency: { limit: 1, key: 'principal' } },
    },
    async () => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      return text('done');
    },
  );
}

describe('/metrics: time-outs, retries and durable waits', () => {
  let dir: string;
  let store: SqliteTaskStore;
  let app: TaskServer;
  let base: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'taskrail-policy-metrics-'));
    store = new SqliteTaskStore(join(dir, 'tasks.db'));
    app = createTaskServer({
      store,
      admin: { tokens: { [ADMIN]: 'ops' } },
      runtime: { leaseMs: 600 },
    });
    registerPolicyTools(app);
    base = `http://127.0.0.1:${(await app.listen(0, '127.0.0.1')).port}`;
  });
  after(async () => {
    await app.close(1000);
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function scrape(): Promise<{ samples: Sample[]; types: Map<string, string> }> {
    const response = await fetch(`${base}/metrics`, {
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    assert.equal(response.status, 200);
    return parsePrometheusText(await response.text());
  }

  async function run(tool: string): Promise<string> {
    const task = await app.runtime.createTask({ tool, arguments: {}, principal: PRINCIPAL });
    await waitFor(`${tool} to end`, async () => {
      const status = (await store.get(task.id))?.status;
      return status === 'completed' || status === 'failed' ? true : undefined;
    });
    return (await store.get(task.id))?.status as string;
  }

  it('declares the new counters', async () => {
    const { types } = await scrape();
    for (const name of [
      'taskrail_attempt_timeouts_total',
      'taskrail_retries_total',
      'taskrail_retried_tasks_finished_total',
      'taskrail_durable_waits_total',
      'taskrail_permit_waits_total',
    ]) {
      assert.equal(types.get(name), 'counter', name);
    }
  });

  it('counts each time-out, retry and wait by tool, reason, kind and outcome', async () => {
    const before = (await scrape()).samples;
    assert.equal(await run('limited'), 'failed');
    assert.equal(await run('flaky'), 'completed');
    assert.equal(await run('slow_once'), 'completed');
    assert.equal(await run('napper'), 'completed');
    assert.equal(await run('quick'), 'completed');
    const now = (await scrape()).samples;
    const delta = (name: string, labels: Record<string, string>) =>
      valueOf(now, name, labels) - valueOf(before, name, labels);
    assert.equal(delta('taskrail_attempt_timeouts_total', { tool: 'limited' }), 1);
    assert.equal(delta('taskrail_attempt_timeouts_total', { tool: 'slow_once' }), 1);
    assert.equal(delta('taskrail_retries_total', { tool: 'limited' }), 0, 'retry: false');
    assert.equal(delta('taskrail_retries_total', { tool: 'flaky', reason: 'error' }), 2);
    assert.equal(delta('taskrail_retries_total', { tool: 'slow_once', reason: 'timeout' }), 1);
    assert.equal(delta('taskrail_durable_waits_total', { tool: 'flaky', kind: 'backoff' }), 2);
    assert.equal(delta('taskrail_durable_waits_total', { tool: 'slow_once', kind: 'backoff' }), 1);
    assert.equal(delta('taskrail_durable_waits_total', { tool: 'napper', kind: 'sleep' }), 1);
    assert.equal(delta('taskrail_durable_waits_total', { tool: 'napper', kind: 'backoff' }), 0);
    const retried = (tool: string) =>
      delta('taskrail_retried_tasks_finished_total', { tool, outcome: 'completed' });
    assert.equal(retried('flaky'), 1);
    assert.equal(retried('slow_once'), 1);
    assert.equal(retried('napper'), 0, 'a sleep is not an attempt');
    assert.equal(retried('quick'), 0);
  });

  it('counts a re-run after an interruption', async () => {
    const before = (await scrape()).samples;
    // A task whose runner died holding its lease: the next recovery scan re-runs it.
    const record = newTaskRecord(
      {
        id: newTaskId(),
        principal: PRINCIPAL,
        tool: 'quick',
        arguments: {},
        ttlMs: 60_000,
        pollIntervalMs: 1000,
      },
      Date.now(),
    );
    await store.create(record, { lease: { owner: 'a-runner-that-died', leaseMs: 100 } });
    await waitFor(
      'the re-run',
      async () => ((await store.get(record.id))?.status === 'completed' ? true : undefined),
      { timeoutMs: 10_000 },
    );
    const now = (await scrape()).samples;
    const delta = (name: string, labels: Record<string, string>) =>
      valueOf(now, name, labels) - valueOf(before, name, labels);
    assert.equal(delta('taskrail_retries_total', { tool: 'quick', reason: 'interrupted' }), 1);
    assert.equal(
      delta('taskrail_retried_tasks_finished_total', { tool: 'quick', outcome: 'completed' }),
      1,
    );
  });

  it('counts permit waits by tool (the key, here the caller, is no label)', async () => {
    const before = (await scrape()).samples;
    const create = () =>
      app.runtime.createTask({ tool: 'one_per_caller', arguments: {}, principal: PRINCIPAL });
    const ids = [(await create()).id, (await create()).id];
    for (const id of ids) {
      await waitFor(`${id} to end`, async () =>
        (await store.get(id))?.status === 'completed' ? true : undefined,
      );
    }
    const now = (await scrape()).samples;
    const waits = valueOf(now, 'taskrail_permit_waits_total', { tool: 'one_per_caller' });
    const earlier = valueOf(before, 'taskrail_permit_waits_total', { tool: 'one_per_caller' });
    assert.equal(waits - earlier, 1, 'the second start waited once');
  });

  it('names no principal in any label', async () => {
    const { samples } = await scrape();
    for (const sample of samples) {
      assert.ok(!('principal' in sample.labels), `${sample.name} has a principal label`);
      for (const value of Object.values(sample.labels)) {
        assert.ok(!value.includes(PRINCIPAL), `${sample.name} names ${PRINCIPAL}`);
      }
    }
  });
});
