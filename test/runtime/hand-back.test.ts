import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { HandBackSignal } from '../../src/runtime/park.js';
import { TaskRuntime } from '../../src/runtime/runtime.js';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';
import { waitFor } from '../helpers/wait.js';
import { TestTools, text } from './tools.js';

const runtimes: TaskRuntime[] = [];
afterEach(async () => {
  for (const runtime of runtimes.splice(0)) await runtime.stop(1000);
});

const logger = { info() {}, warn() {}, error() {} };

describe('a run handed back to the process that holds its live state', () => {
  it('leaves the task working without counting an attempt; runHere then runs it here', async () => {
    let handBack = true;
    const store = new MemoryTaskStore();
    const tools = new TestTools().add('held', () => {
      if (handBack) throw new HandBackSignal('belongs elsewhere');
      return text('ran where it belongs');
    });
    const runtime = new TaskRuntime({ store, tools, logger });
    runtimes.push(runtime);
    const task = await runtime.createTask({ tool: 'held', arguments: {}, principal: 'alice' });
    await waitFor('the first run to hand back', () =>
      tools.calls.get('held') === 1 ? true : undefined,
    );
    const handedBack = await waitFor('the lease to be released', async () => {
      const leased = await store.findLeased(10);
      return leased.length === 0 ? await store.get(task.id) : undefined;
    });
    assert.equal(handedBack?.status, 'working');
    assert.equal(handedBack?.attempt, task.attempt, 'no attempt counted');
    handBack = false;
    assert.equal(await runtime.runHere(task.id), true);
    const done = await waitFor('the task to complete', async () => {
      const current = await store.get(task.id);
      return current?.status === 'completed' ? current : undefined;
    });
    assert.deepEqual(done.result, text('ran where it belongs'));
    assert.equal(tools.calls.get('held'), 2);
    assert.equal(await runtime.runHere(task.id), false, 'a finished task is not run again');
  });
});
