import assert from 'node:assert/strict';
import type { TaskEventMap, TaskEventName } from '../../store/events.js';
import type { TaskStore } from '../../store/port.js';
import { complete, report } from '../../task/transitions.js';
import { waitFor } from '../support/wait.js';
import type { DefineCase } from './harness.js';

type Recorded = { [K in TaskEventName]: { name: K; event: TaskEventMap[K] } }[TaskEventName];

/** Records every event in order. Delivery may be asynchronous, so checks wait for counts. */
function record(store: TaskStore): Recorded[] {
  const seen: Recorded[] = [];
  const names: TaskEventName[] = [
    'task:created',
    'task:updated',
    'task:transition',
    'task:deleted',
    'task:text',
  ];
  for (const name of names) {
    store.events.on(name, (event) => seen.push({ name, event } as Recorded));
  }
  return seen;
}

const count = (seen: Recorded[], n: number) =>
  waitFor(`${n} events (have ${seen.length})`, () => seen.length >= n, { timeoutMs: 5000 });

export function registerEventCases(define: DefineCase): void {
  define('create emits task:created; an idempotent repeat emits nothing', async (h) => {
    const seen = record(h.store);
    const task = await h.create({ idempotencyKey: 'once' });
    await h.store.create(h.record({ idempotencyKey: 'once' }));
    const other = await h.create();
    await count(seen, 2);
    assert.deepEqual(seen, [
      { name: 'task:created', event: { task } },
      { name: 'task:created', event: { task: other } },
    ]);
  });

  define('a write emits task:updated, a status change also task:transition', async (h) => {
    const task = await h.create();
    const seen = record(h.store);
    const reported = report(task, 'half', h.clock.now());
    await h.store.compareAndSet(reported, task.revision);
    const done = complete(reported, { content: [] }, h.clock.now());
    await h.store.compareAndSet(done, reported.revision);
    await count(seen, 3);
    assert.deepEqual(seen, [
      { name: 'task:updated', event: { task: reported, previousStatus: 'working' } },
      { name: 'task:updated', event: { task: done, previousStatus: 'working' } },
      { name: 'task:transition', event: { task: done, from: 'working', to: 'completed' } },
    ]);
  });

  define('a lost write emits nothing', async (h) => {
    const task = await h.create();
    const first = report(task, 'first', h.clock.now());
    assert.equal((await h.store.compareAndSet(first, task.revision)).ok, true);
    const seen = record(h.store);
    const stale = await h.store.compareAndSet(report(task, 'stale', h.clock.now()), task.revision);
    assert.equal(stale.ok, false);
    // A later successful write: once its event arrives, any event of the lost write would have.
    const marker = report(first, 'marker', h.clock.now());
    await h.store.compareAndSet(marker, first.revision);
    await count(seen, 1);
    assert.deepEqual(seen, [
      { name: 'task:updated', event: { task: marker, previousStatus: 'working' } },
    ]);
  });

  define('sweeping emits task:deleted for each swept task', async (h) => {
    const a = await h.create({ ttlMs: 10 });
    const b = await h.create({ ttlMs: 10 });
    const seen = record(h.store);
    h.clock.advance(10);
    assert.equal((await h.store.sweepExpired(10)).length, 2);
    await count(seen, 2);
    const deleted = seen.map((entry) => (entry.name === 'task:deleted' ? entry.event.id : ''));
    assert.deepEqual(deleted.sort(), [a.id, b.id].sort());
  });

  define(
    'an append emits task:text with the new length, also to a peer that listens',
    async (h) => {
      const task = await h.create();
      const peer = await h.peer();
      const seen = record(h.store);
      const heard = peer === h.store ? seen : record(peer);
      await h.store.appendText(task.id, 'output', 'one\n');
      await h.store.appendText(task.id, 'output', 'two\n');
      await count(seen, 2);
      assert.deepEqual(seen.slice(0, 2), [
        { name: 'task:text', event: { id: task.id, kind: 'output', end: 4 } },
        { name: 'task:text', event: { id: task.id, kind: 'output', end: 8 } },
      ]);
      if (h.crossProcessEvents === false) return;
      await count(heard, 2);
      assert.deepEqual(heard.slice(-1), [
        { name: 'task:text', event: { id: task.id, kind: 'output', end: 8 } },
      ]);
    },
  );
}
