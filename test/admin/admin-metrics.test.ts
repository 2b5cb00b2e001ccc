import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '../helpers/wait.js';
import { ADMIN, call, startHarness, type Harness } from './harness.js';
import { parsePrometheusText, valueOf, type Sample } from './prom-text.js';

describe('/metrics', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  async function scrape(): Promise<Sample[]> {
    const response = await fetch(`${h.base}/metrics`, {
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain/);
    return parsePrometheusText(await response.text()).samples;
  }

  it('declares every metric with its type', async () => {
    const response = await call(h.base, '/metrics', ADMIN);
    const { types } = parsePrometheusText(response.body as string);
    assert.equal(types.get('taskrail_tasks_created_total'), 'counter');
    assert.equal(types.get('taskrail_tasks_finished_total'), 'counter');
    assert.equal(types.get('taskrail_task_duration_seconds'), 'histogram');
    for (const gauge of [
      'taskrail_tasks_running',
      'taskrail_tasks_parked',
      'taskrail_queue_depth',
    ]) {
      assert.equal(types.get(gauge), 'gauge');
    }
    assert.equal(types.get('taskrail_store_errors_total'), 'counter');
    assert.equal(types.get('taskrail_lease_renewals_total'), 'counter');
  });

  it('moves the counters and the duration histogram as tasks finish', async () => {
    const before = await scrape();
    const tasks = [await h.create('quick'), await h.create('quick')];
    for (const task of tasks) {
      await waitFor('completion', async () => (await h.store.get(task.id))?.status === 'completed');
    }
    const now = await scrape();
    const delta = (name: string, labels: Record<string, string>) =>
      valueOf(now, name, labels) - valueOf(before, name, labels);
    assert.equal(delta('taskrail_tasks_created_total', { tool: 'quick' }), 2);
    assert.equal(
      delta('taskrail_tasks_finished_total', { tool: 'quick', outcome: 'completed' }),
      2,
    );
    assert.equal(
      delta('taskrail_task_duration_seconds_count', { tool: 'quick', outcome: 'completed' }),
      2,
    );
    assert.ok(valueOf(now, 'taskrail_lease_claims_total') >= 2);
  });

  it('counts a tool that returned isError as a tool error, not as completed', async () => {
    const before = await scrape();
    const task = await h.create('oops');
    await waitFor(
      'the tool error',
      async () => (await h.store.get(task.id))?.status === 'completed',
    );
    const now = await scrape();
    const delta = (name: string, outcome: string) =>
      valueOf(now, name, { tool: 'oops', outcome }) -
      valueOf(before, name, { tool: 'oops', outcome });
    assert.equal(delta('taskrail_tasks_finished_total', 'tool_error'), 1);
    assert.equal(delta('taskrail_tasks_finished_total', 'completed'), 0);
    assert.equal(delta('taskrail_task_duration_seconds_count', 'tool_error'), 1);
    const row = await call(h.base, `/dashboard/api/tasks/${task.id}`, ADMIN);
    assert.equal(row.body.status, 'completed');
    assert.equal(row.body.outcome, 'tool_error');
  });

  it('shows running and parked tasks, lease heartbeats, and cancellations', async () => {
    const running = await h.create('gate', { key: 'metrics' });
    const parked = await h.create('ask');
    const samples = await waitFor('a running and a parked task', async () => {
      const s = await scrape();
      return valueOf(s, 'taskrail_tasks_running') === 1 &&
        valueOf(s, 'taskrail_tasks_parked') === 1 &&
        valueOf(s, 'taskrail_lease_renewals_total', { outcome: 'held' }) > 0
        ? s
        : undefined;
    });
    assert.equal(valueOf(samples, 'taskrail_queue_depth'), 0);
    await h.app.runtime.cancelTask(parked.id, 'alice');
    h.open('metrics');
    await waitFor('both to end', async () => {
      const s = await scrape();
      return (
        valueOf(s, 'taskrail_tasks_finished_total', { tool: 'ask', outcome: 'cancelled' }) === 1 &&
        valueOf(s, 'taskrail_tasks_finished_total', { tool: 'gate', outcome: 'completed' }) === 1 &&
        valueOf(s, 'taskrail_tasks_running') === 0 &&
        valueOf(s, 'taskrail_tasks_parked') === 0
      );
    });
    assert.ok(running.id);
  });

  it('counts failed store calls', async () => {
    const before = valueOf(await scrape(), 'taskrail_store_errors_total', {
      operation: 'saveStep',
    });
    await assert.rejects(h.app.runtime.store.saveStep('no-such-task', 'x', 1));
    const now = valueOf(await scrape(), 'taskrail_store_errors_total', { operation: 'saveStep' });
    assert.equal(now - before, 1);
  });
});
