import assert from 'node:assert/strict';
import { describe, it, afterEach } from 'node:test';
import { TaskRuntime } from '../../src/runtime/runtime.js';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';
import type { TaskRecord } from '../../src/task/record.js';
import { isTerminal } from '../../src/task/status.js';
import { waitFor } from '../helpers/wait.js';
import { TestTools, abortable, protocolError, text } from './tools.js';

const runtimes: TaskRuntime[] = [];
afterEach(async () => {
  for (const runtime of runtimes.splice(0)) await runtime.stop(1000);
});

function setup(
  tools: TestTools,
  options: Partial<ConstructorParameters<typeof TaskRuntime>[0]> = {},
) {
  const store = new MemoryTaskStore();
  const runtime = new TaskRuntime({ store, tools, logger: silent, ...options });
  runtimes.push(runtime);
  return { store, runtime };
}

const silent = { info() {}, warn() {}, error() {} };

async function settled(runtime: TaskRuntime, task: TaskRecord, principal = 'alice') {
  return waitFor(`task ${task.id} to end`, async () => {
    const current = await runtime.getTask(task.id, principal);
    return current !== undefined && isTerminal(current.status) ? current : undefined;
  });
}

describe('TaskRuntime outcomes', () => {
  const tools = new TestTools()
    .add('ok', (args) => text(`hello ${String(args.name)}`))
    .add('tool_error', () => ({ ...text('no such file'), isError: true }))
    .add('protocol_error', protocolError)
    .add('crash', () => {
      throw new Error('secret detail /etc/passwd');
    });

  it('completes with the returned result', async () => {
    const { runtime } = setup(tools);
    const task = await runtime.createTask({
      tool: 'ok',
      arguments: { name: 'Ada' },
      principal: 'alice',
    });
    assert.equal(task.status, 'working');
    const done = await settled(runtime, task);
    assert.equal(done.status, 'completed');
    assert.deepEqual(done.result, text('hello Ada'));
  });

  it('keeps isError results completed (a tool error is not a protocol failure)', async () => {
    const { runtime } = setup(tools);
    const done = await settled(
      runtime,
      await runtime.createTask({ tool: 'tool_error', arguments: {}, principal: 'alice' }),
    );
    assert.equal(done.status, 'completed');
    assert.equal(done.result?.isError, true);
  });

  it('fails with the code and message of a thrown RpcError', async () => {
    const { runtime } = setup(tools);
    const done = await settled(
      runtime,
      await runtime.createTask({ tool: 'protocol_error', arguments: {}, principal: 'alice' }),
    );
    assert.equal(done.status, 'failed');
    assert.deepEqual(done.error, {
      code: -32001,
      message: 'upstream rejected the job',
      data: { retryable: false },
    });
    assert.equal(done.result, undefined);
  });

  it('fails other exceptions with -32603 and a safe message', async () => {
    const { runtime } = setup(tools);
    const done = await settled(
      runtime,
      await runtime.createTask({ tool: 'crash', arguments: {}, principal: 'alice' }),
    );
    assert.equal(done.status, 'failed');
    assert.equal(done.error?.code, -32603);
    assert.doesNotMatch(JSON.stringify(done), /passwd|at .*\.js/);
  });

  it('hides tasks from other principals', async () => {
    const { runtime } = setup(tools);
    const task = await runtime.createTask({ tool: 'ok', arguments: {}, principal: 'alice' });
    assert.equal(await runtime.getTask(task.id, 'mallory'), undefined);
    assert.equal(await runtime.cancelTask(task.id, 'mallory'), undefined);
    assert.equal(await runtime.answerInput(task.id, 'mallory', {}), undefined);
  });

  it('rejects unknown tools, forbidden tools and oversized arguments before writing', async () => {
    const local = new TestTools().add('sync_only', () => text('x'), { mode: 'forbidden' });
    const { runtime, store } = setup(local, { maxArgumentsBytes: 100 });
    await assert.rejects(runtime.createTask({ tool: 'nope', arguments: {}, principal: 'a' }), {
      code: -32602,
    });
    await assert.rejects(runtime.createTask({ tool: 'sync_only', arguments: {}, principal: 'a' }), {
      code: -32601,
    });
    local.add('big', () => text('x'));
    await assert.rejects(
      runtime.createTask({ tool: 'big', arguments: { blob: 'x'.repeat(200) }, principal: 'a' }),
      /at most 100/,
    );
    assert.equal((await store.list({})).tasks.length, 0);
  });

  it('fails a task whose result is over the size limit', async () => {
    const local = new TestTools().add('huge', () => text('y'.repeat(5000)));
    const { runtime } = setup(local, { maxResultBytes: 1000 });
    const done = await settled(
      runtime,
      await runtime.createTask({ tool: 'huge', arguments: {}, principal: 'alice' }),
    );
    assert.equal(done.status, 'failed');
    assert.match(done.error?.message ?? '', /at most 1000/);
  });
});

describe('TaskRuntime cancellation', () => {
  it('fires the handler signal and ends cancelled; a late result does not overwrite it', async () => {
    let sawAbortAt = 0;
    const tools = new TestTools().add('wait', async (_args, ctx) => {
      await abortable(ctx.signal).catch(() => {
        sawAbortAt = performance.now();
      });
      return text('finished anyway');
    });
    const { runtime } = setup(tools);
    const task = await runtime.createTask({ tool: 'wait', arguments: {}, principal: 'alice' });
    await waitFor('handler to start', () => tools.calls.get('wait') === 1);
    const cancelledAt = performance.now();
    const cancelled = await runtime.cancelTask(task.id, 'alice');
    assert.equal(cancelled?.status, 'cancelled');
    await waitFor('signal to fire', () => sawAbortAt > 0);
    assert.ok(
      sawAbortAt - cancelledAt < 50,
      `in-process cancellation took ${sawAbortAt - cancelledAt} ms`,
    );
    const after = await settled(runtime, task);
    assert.equal(after.status, 'cancelled');
    assert.equal(after.result, undefined);
  });

  it('returns a terminal task unchanged when cancelled again', async () => {
    const tools = new TestTools().add('ok', () => text('done'));
    const { runtime } = setup(tools);
    const done = await settled(
      runtime,
      await runtime.createTask({ tool: 'ok', arguments: {}, principal: 'alice' }),
    );
    const again = await runtime.cancelTask(done.id, 'alice');
    assert.equal(again?.status, 'completed');
    assert.equal(again?.revision, done.revision);
  });
});

describe('TaskRuntime input and steps', () => {
  it('parks on input, takes partial answers, resumes and replays steps without re-running them', async () => {
    let expensive = 0;
    const tools = new TestTools().add('ask', async (_args, ctx) => {
      const prepared = await ctx.step('prepare', () => ++expensive);
      const answers = await ctx.input({
        first: {
          method: 'elicitation/create',
          params: { message: 'first?', requestedSchema: { type: 'object', properties: {} } },
        },
        second: {
          method: 'elicitation/create',
          params: { message: 'second?', requestedSchema: { type: 'object', properties: {} } },
        },
      });
      return text(
        `prepared ${prepared}: ${JSON.stringify(answers.first)} ${JSON.stringify(answers.second)}`,
      );
    });
    const { runtime } = setup(tools);
    const task = await runtime.createTask({ tool: 'ask', arguments: {}, principal: 'alice' });
    const parked = await waitFor('input_required', async () => {
      const t = await runtime.getTask(task.id, 'alice');
      return t?.status === 'input_required' ? t : undefined;
    });
    assert.deepEqual(Object.keys(parked.inputRequests).sort(), ['first', 'second']);

    const partial = await runtime.answerInput(task.id, 'alice', {
      first: { action: 'accept', content: { n: 1 } },
      bogus: { x: 1 },
    });
    assert.equal(partial?.status, 'input_required');
    assert.deepEqual(Object.keys(partial?.inputResponses ?? {}), ['first']);
    await runtime.answerInput(task.id, 'alice', {
      second: { action: 'decline' },
      first: { action: 'accept', content: { n: 2 } },
    });

    const done = await settled(runtime, task);
    assert.equal(done.status, 'completed');
    assert.deepEqual(
      done.result,
      text('prepared 1: {"action":"accept","content":{"n":1}} {"action":"decline"}'),
    );
    assert.equal(expensive, 1, 'the finished step ran once');
    assert.equal(tools.calls.get('ask'), 2, 'the handler ran again after the answers');
  });

  it('runs inline: MRTR questions come back, answers complete the call', async () => {
    const tools = new TestTools().add('greet', async (_args, ctx) => {
      const answer = await ctx.elicit('name', {
        message: 'Who?',
        requestedSchema: { type: 'object', properties: { name: { type: 'string' } } },
      });
      return text(`Hello, ${String(answer.content?.name)}!`);
    });
    const { runtime } = setup(tools);
    const first = await runtime.runInline({ tool: 'greet', arguments: {}, principal: 'p' });
    assert.equal(first.kind, 'input_required');
    assert.deepEqual(Object.keys(first.kind === 'input_required' ? first.inputRequests : {}), [
      'name',
    ]);
    const second = await runtime.runInline({
      tool: 'greet',
      arguments: {},
      principal: 'p',
      inputResponses: { name: { action: 'accept', content: { name: 'Alice' } } },
    });
    assert.deepEqual(second, { kind: 'result', result: text('Hello, Alice!') });
    assert.equal(runtime.started, false, 'a synchronous call starts no background machinery');
  });

  it('throttles progress into statusMessage', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const tools = new TestTools().add('progress', async (_args, ctx) => {
      for (let i = 0; i < 100; i += 1)
        await ctx.progress({ increment: 1, total: 100, message: 'crunching' });
      await gate;
      return text('ok');
    });
    const { runtime, store } = setup(tools);
    let writes = 0;
    store.events.on('task:updated', () => (writes += 1));
    const task = await runtime.createTask({ tool: 'progress', arguments: {}, principal: 'alice' });
    const seen = await waitFor(
      'a progress message',
      async () => (await runtime.getTask(task.id, 'alice'))?.statusMessage,
    );
    assert.match(seen, /^crunching \(\d+\/100\)$/);
    assert.ok(writes < 10, `100 progress calls caused ${writes} writes`);
    release();
    await settled(runtime, task);
  });
});

describe('TaskRuntime when idle', () => {
  it('holds no handle before start and after stop', async () => {
    const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const tools = new TestTools().add('ok', () => text('done'));
    const { runtime } = setup(tools);
    assert.equal(runtime.started, false);
    assert.equal(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length, before);
    await settled(
      runtime,
      await runtime.createTask({ tool: 'ok', arguments: {}, principal: 'alice' }),
    );
    assert.equal(runtime.started, true);
    await runtime.stop();
    await waitFor(
      'timers to be released',
      () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length <= before,
    );
  });
});
