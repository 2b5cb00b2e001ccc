import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as pollInterval } from 'node:timers/promises';
import { TaskRuntime } from '../../src/runtime/runtime.js';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';
import { waitFor } from '../helpers/wait.js';
import { TestTools, text } from './tools.js';

const silent = { info() {}, warn() {}, error() {} };

describe('lease renewal', () => {
  it('keeps a running task’s lease live for as long as it runs, several leases long', async () => {
    const store = new MemoryTaskStore();
    let release: () => void = () => undefined;
    const finish = new Promise<void>((resolve) => (release = resolve));
    const tools = new TestTools().add('long', async () => {
      await finish;
      return text('done');
    });
    const leaseMs = 600;
    const runtime = new TaskRuntime({ store, tools, logger: silent, leaseMs });
    try {
      const task = await runtime.createTask({ tool: 'long', arguments: {}, principal: 'alice' });
      const until = Date.now() + 4 * leaseMs;
      while (Date.now() < until) {
        const stolen = await store.claim(task.id, 'another-runner', leaseMs);
        assert.equal(stolen, undefined, 'a live lease is never taken');
        await pollInterval(50);
      }
      release();
      const done = await waitFor('the task to complete', async () => {
        const current = await store.get(task.id);
        return current?.status === 'completed' ? current : undefined;
      });
      assert.equal(done.status, 'completed');
    } finally {
      release();
      await runtime.stop(1000);
    }
  });
});
