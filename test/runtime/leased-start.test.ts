import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { LocalExecutor } from '../../src/runtime/local-executor.js';
import { TaskRuntime } from '../../src/runtime/runtime.js';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';
import { waitFor } from '../helpers/wait.js';
import { TestTools, abortable, text } from './tools.js';

const silent = { info() {}, warn() {}, error() {} };
const runtimes: TaskRuntime[] = [];
afterEach(async () => {
  for (const runtime of runtimes.splice(0)) await runtime.stop(1000);
});

describe('LocalExecutor reservations', () => {
  it('hands out free slots only, and counts them against the concurrency', async () => {
    const executor = new LocalExecutor({ concurrency: 2 });
    assert.equal(executor.reserve(), undefined, 'not before start');
    const ran: string[] = [];
    executor.start(async (id) => void ran.push(id));
    const first = executor.reserve();
    const second = executor.reserve();
    assert.ok(first && second);
    assert.equal(executor.reserve(), undefined, 'both slots are held');
    assert.equal(executor.activeCount, 2);
    second.release();
    second.release();
    assert.equal(executor.activeCount, 1, 'a release gives the slot back once');
    let finish = (): void => undefined;
    first.run('t1', () => new Promise<void>((resolve) => (finish = resolve)));
    assert.throws(() => first.run('t1', async () => undefined), /runs once/);
    await executor.dispatch('t2');
    await waitFor('the queued task to run in the free slot', () => ran.includes('t2'));
    assert.equal(executor.activeCount, 1);
    finish();
    await waitFor('the reserved run to end', () => executor.activeCount === 0);
    await executor.stop(100);
    assert.equal(executor.reserve(), undefined, 'not after stop');
  });
});

describe('TaskRuntime starting a task in the creating write', () => {
  function setup(tools: TestTools, concurrency = 16) {
    const store = new MemoryTaskStore();
    const runtime = new TaskRuntime({ store, tools, concurrency, logger: silent });
    runtimes.push(runtime);
    return { store, runtime };
  }

  it('never starts the handler of a task cancelled before its run began', async () => {
    const tools = new TestTools().add('work', () => text('ran'));
    const { runtime } = setup(tools);
    const task = await runtime.createTask({ tool: 'work', arguments: {}, principal: 'alice' });
    const cancelled = await runtime.cancelTask(task.id, 'alice');
    assert.equal(cancelled?.status, 'cancelled');
    await runtime.stop(1000); // waits for the run, which holds its slot until it ends
    assert.equal(tools.calls.get('work') ?? 0, 0);
    assert.equal((await runtime.getTask(task.id, 'alice'))?.status, 'cancelled');
  });

  it('leases a task at creation only while a slot is free; the rest wait unleased', async () => {
    const release = new AbortController();
    const tools = new TestTools().add('hold', (_args, ctx) =>
      Promise.race([abortable(ctx.signal), abortable(release.signal).catch(() => text('done'))]),
    );
    const { store, runtime } = setup(tools, 1);
    const first = await runtime.createTask({ tool: 'hold', arguments: {}, principal: 'alice' });
    const second = await runtime.createTask({ tool: 'hold', arguments: {}, principal: 'alice' });
    assert.deepEqual(await store.findRunnable(10), [second.id], 'only the queued task is free');
    await waitFor('the first handler to start', () => tools.calls.get('hold') === 1);
    release.abort();
    for (const task of [first, second]) {
      const done = await waitFor(`task ${task.id} to complete`, async () => {
        const current = await runtime.getTask(task.id, 'alice');
        return current?.status === 'completed' ? current : undefined;
      });
      assert.deepEqual(done.result, text('done'));
      assert.equal(done.attempt, 1);
    }
    assert.equal(tools.calls.get('hold'), 2);
  });
});
