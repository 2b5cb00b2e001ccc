import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { TaskRuntime } from '../../src/runtime/runtime.js';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';
import { isRpcError } from '../../src/task/errors.js';
import type { TaskRecord } from '../../src/task/record.js';
import { waitFor } from '../helpers/wait.js';
import { TestTools, text } from './tools.js';

const runtimes: TaskRuntime[] = [];
afterEach(async () => {
  for (const runtime of runtimes.splice(0)) await runtime.stop(1000);
});

const warnings: string[] = [];
const logger = { info() {}, warn: (m: string) => warnings.push(m), error() {} };

function setup(tools: TestTools) {
  const runtime = new TaskRuntime({ store: new MemoryTaskStore(), tools, logger });
  runtimes.push(runtime);
  return runtime;
}

function reached(runtime: TaskRuntime, task: TaskRecord, status: string) {
  return waitFor(`task ${task.id} ${status}`, async () => {
    const current = await runtime.getTask(task.id, 'alice');
    return current?.status === status ? current : undefined;
  });
}

const CONFIRM = {
  message: 'Delete everything?',
  requestedSchema: {
    type: 'object',
    properties: { confirm: { type: 'boolean' }, reason: { type: 'string', minLength: 3 } },
    required: ['confirm'],
  },
};

describe('parking cannot be skipped', () => {
  it('a handler that swallows ctx.elicit does not delete unconfirmed; the answer resumes it', async () => {
    let deletions = 0;
    const tools = new TestTools().add('confirm_then_delete', async (_args, ctx) => {
      let confirmed = false;
      try {
        const answer = await ctx.elicit('confirm', CONFIRM as never);
        confirmed = answer.action === 'accept' && answer.content?.['confirm'] === true;
      } catch {
        // a careless handler: carries on as if the user had said no… or yes
      }
      await ctx.step('delete', () => {
        deletions += 1;
        return 'deleted';
      });
      return text(confirmed ? 'deleted' : 'deleted without asking');
    });
    const runtime = setup(tools);
    const task = await runtime.createTask({
      tool: 'confirm_then_delete',
      arguments: {},
      principal: 'alice',
    });
    const waiting = await reached(runtime, task, 'input_required');
    assert.deepEqual(Object.keys(waiting.inputRequests), ['confirm']);
    await waitFor('the first run to end', () => tools.calls.get('confirm_then_delete') === 1);
    // Give the swallowed run every chance to write an outcome it must not write.
    await runtime.recoverNow();
    const still = await runtime.getTask(task.id, 'alice');
    assert.equal(still?.status, 'input_required');
    assert.equal(deletions, 0, 'nothing deleted before the answer');

    await runtime.answerInput(task.id, 'alice', {
      confirm: { action: 'accept', content: { confirm: true } },
    });
    const done = await reached(runtime, task, 'completed');
    assert.deepEqual(done.result, text('deleted'));
    assert.equal(deletions, 1);
    assert.equal(tools.calls.get('confirm_then_delete'), 2);
  });

  it('a handler that returns after catching ctx.input is parked the same way (returning early)', async () => {
    const tools = new TestTools().add('early_return', async (_args, ctx) => {
      try {
        await ctx.input({ name: { method: 'elicitation/create', params: CONFIRM } });
      } catch {
        return text('finished without the answer');
      }
      return text('finished with the answer');
    });
    const runtime = setup(tools);
    const task = await runtime.createTask({
      tool: 'early_return',
      arguments: {},
      principal: 'alice',
    });
    await reached(runtime, task, 'input_required');
    await waitFor('the first run to end', () => tools.calls.get('early_return') === 1);
    assert.equal((await runtime.getTask(task.id, 'alice'))?.status, 'input_required');
    assert.ok(warnings.some((w) => w.includes('went on after asking for input')));
    await runtime.answerInput(task.id, 'alice', { name: { action: 'decline' } });
    const done = await reached(runtime, task, 'completed');
    assert.deepEqual(done.result, text('finished with the answer'));
  });
});

describe('answers are checked before they are stored', () => {
  const tools = new TestTools()
    .add('ask', async (_args, ctx) => {
      const answer = await ctx.elicit('confirm', CONFIRM as never);
      return text(answer.action);
    })
    .add('sample', async (_args, ctx) => {
      const answers = await ctx.input({
        draft: { method: 'sampling/createMessage', params: { messages: [], maxTokens: 10 } },
      });
      return text(JSON.stringify(answers['draft']?.['content']));
    });

  async function refused(runtime: TaskRuntime, task: TaskRecord, key: string, answer: unknown) {
    await assert.rejects(
      runtime.answerInput(task.id, 'alice', { [key]: answer as never }),
      (error: unknown) => isRpcError(error) && error.code === -32602 && error.message.includes(key),
      JSON.stringify(answer),
    );
    const current = await runtime.getTask(task.id, 'alice');
    assert.equal(current?.status, 'input_required');
    assert.deepEqual(current?.inputResponses, {}, 'nothing stored');
  }

  it('refuses bad elicitation answers with -32602 naming the key; the task keeps waiting', async () => {
    const runtime = setup(tools);
    const task = await runtime.createTask({ tool: 'ask', arguments: {}, principal: 'alice' });
    await reached(runtime, task, 'input_required');
    for (const answer of [
      {},
      { action: 'bogus' },
      { action: 'accept' },
      { action: 'accept', content: { confirm: 'yes' } },
      { action: 'accept', content: { reason: 'no confirm' } },
      { action: 'accept', content: { confirm: true, reason: 'x' } },
    ]) {
      await refused(runtime, task, 'confirm', answer);
    }
    await runtime.answerInput(task.id, 'alice', {
      confirm: { action: 'accept', content: { confirm: true, reason: 'tidy' } },
    });
    assert.deepEqual((await reached(runtime, task, 'completed')).result, text('accept'));
  });

  it('refuses sampling answers that are not a CreateMessageResult', async () => {
    const runtime = setup(tools);
    const task = await runtime.createTask({ tool: 'sample', arguments: {}, principal: 'alice' });
    await reached(runtime, task, 'input_required');
    for (const answer of [
      {},
      { role: 'robot', model: 'm', content: { type: 'text', text: 'hi' } },
      { role: 'assistant', content: { type: 'text', text: 'hi' } },
      { role: 'assistant', model: 'm', content: { text: 'hi' } },
      { role: 'assistant', model: 'm', content: [] },
    ]) {
      await refused(runtime, task, 'draft', answer);
    }
    const good = { role: 'assistant', model: 'm', content: { type: 'text', text: 'hi' } };
    await runtime.answerInput(task.id, 'alice', { draft: good });
    const done = await reached(runtime, task, 'completed');
    assert.deepEqual(done.result, text(JSON.stringify(good.content)));
  });
});
