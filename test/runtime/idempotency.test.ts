import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { TaskRuntime } from '../../src/runtime/runtime.js';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';
import { isRpcError } from '../../src/task/errors.js';
import { isTerminal } from '../../src/task/status.js';
import { waitFor } from '../helpers/wait.js';
import { TestTools, text } from './tools.js';

const silent = { info() {}, warn() {}, error() {} };
const runtimes: TaskRuntime[] = [];
afterEach(async () => {
  for (const runtime of runtimes.splice(0)) await runtime.stop(1000);
});

function setup(concurrency = 16) {
  const tools = new TestTools().add('echo', (args) => text(JSON.stringify(args)));
  const store = new MemoryTaskStore();
  const runtime = new TaskRuntime({ store, tools, concurrency, logger: silent });
  runtimes.push(runtime);
  return { tools, store, runtime };
}

const call = (principal: string, args: Record<string, unknown>, idempotencyKey?: string) => ({
  tool: 'echo',
  arguments: args,
  principal,
  ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
});

const invalidParams = (pattern: RegExp) => (error: unknown) =>
  isRpcError(error) && error.code === -32602 && pattern.test(error.message);

describe('TaskRuntime idempotency keys', () => {
  it('a retry with the same key gets the first task, which runs once', async () => {
    const { tools, store, runtime } = setup();
    const first = await runtime.createTask(call('alice', { n: 1 }, 'call-1'));
    const retry = await runtime.createTask(call('alice', { n: 1 }, 'call-1'));
    assert.equal(retry.id, first.id);
    await waitFor('the task to end', async () => {
      const task = await runtime.getTask(first.id, 'alice');
      return task !== undefined && isTerminal(task.status);
    });
    const late = await runtime.createTask(call('alice', { n: 1 }, 'call-1'));
    assert.equal(late.id, first.id);
    assert.equal(late.status, 'completed', 'a retry after the end sees the end');
    assert.equal(tools.calls.get('echo'), 1);
    assert.equal((await store.list({})).tasks.length, 1);
  });

  it('keys are per principal, and absent keys never match', async () => {
    const { store, runtime } = setup();
    const alice = await runtime.createTask(call('alice', { n: 1 }, 'shared'));
    const bob = await runtime.createTask(call('bob', { n: 1 }, 'shared'));
    assert.notEqual(alice.id, bob.id);
    const a = await runtime.createTask(call('alice', { n: 1 }));
    const b = await runtime.createTask(call('alice', { n: 1 }));
    assert.notEqual(a.id, b.id);
    assert.equal((await store.list({})).tasks.length, 4);
  });

  it('refuses a key reused for another call, and a malformed key, before anything runs', async () => {
    const { store, runtime } = setup();
    await runtime.createTask(call('alice', { n: 1 }, 'call-1'));
    await assert.rejects(
      runtime.createTask(call('alice', { n: 2 }, 'call-1')),
      invalidParams(/already used for a different call/),
    );
    for (const key of ['', 'has space', 'x'.repeat(129), 'slash/es']) {
      await assert.rejects(
        runtime.createTask(call('alice', { n: 1 }, key)),
        invalidParams(/idempotency key must be/i),
        JSON.stringify(key),
      );
    }
    assert.equal((await store.list({})).tasks.length, 1);
  });

  it('a refused retry gives its executor slot back', async () => {
    const { runtime } = setup(1);
    const ended = (id: string) =>
      waitFor(`task ${id} to end`, async () => {
        const task = await runtime.getTask(id, 'alice');
        return task !== undefined && isTerminal(task.status) ? task : undefined;
      });
    await ended((await runtime.createTask(call('alice', { n: 1 }, 'call-1'))).id);
    await assert.rejects(runtime.createTask(call('alice', { n: 2 }, 'call-1')));
    const next = await runtime.createTask(call('alice', { n: 3 }));
    assert.equal((await ended(next.id)).status, 'completed', 'the only slot is free again');
  });
});
