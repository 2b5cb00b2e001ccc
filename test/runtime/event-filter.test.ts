import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TaskEvents } from '../../src/store/events.js';
import { newTaskRecord, type TaskRecord } from '../../src/task/record.js';

const task = (id: string): TaskRecord =>
  newTaskRecord(
    { id, principal: 'p', tool: 't', arguments: {}, ttlMs: 60_000, pollIntervalMs: 100 },
    1000,
  );

describe('TaskEvents listeners limited to some tasks', () => {
  it('delivers only the tasks `only` accepts, and says which tasks anyone wants', () => {
    const events = new TaskEvents();
    const followed = new Set(['a']);
    const seen: string[] = [];
    const off = events.on('task:transition', ({ task: t }) => seen.push(t.id), {
      only: (id) => followed.has(id),
    });
    assert.equal(events.wants('task:transition', 'a'), true);
    assert.equal(events.wants('task:transition', 'b'), false, 'nobody follows b');
    assert.equal(events.wants('task:updated', 'a'), false, 'no listener of that event');
    events.emitWrite({ ...task('a'), status: 'completed' }, 'working');
    events.emitWrite({ ...task('b'), status: 'completed' }, 'working');
    assert.deepEqual(seen, ['a']);
    followed.add('b');
    assert.equal(events.wants('task:transition', 'b'), true, 'the filter is asked each time');
    off();
    assert.equal(events.wants('task:transition', 'a'), false, 'gone with its listener');
    assert.equal(events.listenerCount('task:transition'), 0);
  });

  it('counts a listener without a filter as wanting every task', () => {
    const events = new TaskEvents();
    events.on('task:deleted', () => undefined, { only: () => false });
    assert.equal(events.wants('task:deleted', 'x'), false);
    const seen: string[] = [];
    events.on('task:deleted', ({ id }) => seen.push(id));
    assert.equal(events.wants('task:deleted', 'x'), true);
    events.emit('task:deleted', { id: 'x' });
    assert.deepEqual(seen, ['x']);
  });

  it('calls a one-task listener for its own task only, itself removed while called', () => {
    const events = new TaskEvents();
    const seen: string[] = [];
    const offA = events.onTaskUpdated('a', ({ task: t }) => {
      seen.push(`a1:${t.status}`);
      offA();
    });
    events.onTaskUpdated('a', ({ task: t }) => seen.push(`a2:${t.status}`));
    assert.equal(events.wants('task:updated', 'a'), true);
    assert.equal(events.wants('task:updated', 'b'), false, 'nobody waits on b');
    assert.equal(events.wants('task:transition', 'a'), false, 'only task:updated');
    assert.equal(events.listenerCount('task:updated'), 2, 'counted with the others');
    events.emitWrite({ ...task('b'), status: 'completed' }, 'working');
    events.emitWrite({ ...task('a'), status: 'input_required' }, 'working');
    events.emitWrite({ ...task('a'), status: 'completed' }, 'input_required');
    assert.deepEqual(seen, ['a1:input_required', 'a2:input_required', 'a2:completed']);
    assert.equal(events.listenerCount('task:updated'), 1, 'the one left');
  });

  it('forgets a task once its last one-task listener is gone', async () => {
    const events = new TaskEvents();
    const off = events.onTaskUpdated('a', () => {
      throw new Error('a listener that throws is reported, not thrown into the writer');
    });
    const warned = new Promise((resolve) => process.once('warning', resolve));
    events.emitWrite({ ...task('a'), status: 'completed' }, 'working');
    off();
    assert.equal(events.wants('task:updated', 'a'), false);
    await warned;
  });
});
