import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { stopReasonOf, stopReasons } from '../../src/runtime/abort-reasons.js';
import { RunAbort } from '../../src/runtime/run-abort.js';
import { TaskRuntime } from '../../src/runtime/runtime.js';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';
import { waitFor } from '../helpers/wait.js';
import { TestTools, text } from './tools.js';

describe('RunAbort (the run signal made on first read)', () => {
  it('an abort before the first read gives an already aborted signal with its reason', () => {
    const abort = new RunAbort();
    abort.abort(stopReasons.cancelled());
    abort.abort(stopReasons.shutdown()); // the first reason stays, as with AbortController
    assert.equal(abort.signal.aborted, true);
    assert.equal(stopReasonOf(abort.signal), 'cancelled');
    assert.equal(stopReasonOf(abort), 'cancelled');
  });

  it('an abort after the read fires the signal once', () => {
    const abort = new RunAbort();
    const { signal } = abort;
    let fired = 0;
    signal.addEventListener('abort', () => (fired += 1));
    assert.equal(abort.signal, signal);
    abort.abort(stopReasons.leaseLost());
    abort.abort(stopReasons.cancelled());
    assert.equal(fired, 1);
    assert.equal(stopReasonOf(signal), 'lease-lost');
  });
});

describe('a handler that reads ctx.signal only after its task was cancelled', () => {
  it('still sees the cancellation', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let seen: { aborted: boolean; why: string | undefined } | undefined;
    const tools = new TestTools().add('late', async (_args, ctx) => {
      await gate;
      seen = { aborted: ctx.signal.aborted, why: stopReasonOf(ctx.signal) };
      return text('done');
    });
    const late = new TaskRuntime({
      store: new MemoryTaskStore(),
      tools,
      logger: { info() {}, warn() {}, error() {} },
    });
    try {
      const task = await late.createTask({ tool: 'late', arguments: {}, principal: 'alice' });
      await waitFor('handler to start', () => tools.calls.get('late') === 1);
      assert.equal((await late.cancelTask(task.id, 'alice'))?.status, 'cancelled');
      release();
      await waitFor('handler to look at its signal', () => seen !== undefined);
      // Aborted by the store's terminal event or by cancelTask itself, whichever came first.
      assert.equal(seen?.aborted, true);
      assert.ok(seen.why === 'terminal' || seen.why === 'cancelled', String(seen.why));
    } finally {
      await late.stop(1000);
    }
  });
});
