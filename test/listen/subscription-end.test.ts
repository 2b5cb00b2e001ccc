/**
 * How a task stream ends (server/listen/subscription.ts): the last task's final state leaves on
 * its own, and the listen result with the stream's end follow a turn of the event loop later, so
 * a client reads the state without first handling the end of the response. Each message is
 * recorded as the stdio sink hands it on, turn by turn.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_LISTEN_OPTIONS } from '../../src/server/listen/options.js';
import { messageSink } from '../../src/server/listen/sse-sink.js';
import { TaskSubscription } from '../../src/server/listen/subscription.js';
import { newTaskId } from '../../src/task/ids.js';
import { newTaskRecord, type TaskRecord } from '../../src/task/record.js';
import { complete } from '../../src/task/transitions.js';

const PRINCIPAL = 'alice';

function working(): TaskRecord {
  const input = { id: newTaskId(), principal: PRINCIPAL, tool: 'slow', arguments: {} };
  return newTaskRecord({ ...input, ttlMs: 60_000, pollIntervalMs: 1000 }, Date.now());
}

/** What each message is: the acknowledgement, a task's status, or the listen result. */
function kindOf(message: object): string {
  const m = message as { method?: string; params?: { status?: string }; result?: unknown };
  if (m.result !== undefined) return 'result';
  if (m.method === 'notifications/subscriptions/acknowledged') return 'ack';
  return m.params?.status ?? 'other';
}

/** A subscription to `tasks` on a recording sink, started (acknowledged, states sent). */
async function subscribe(tasks: TaskRecord[]) {
  const sent: object[] = [];
  const sink = messageSink((message) => sent.push(message));
  const stored = new Map(tasks.map((task) => [task.id, task]));
  const subscription = new TaskSubscription({
    runtime: { getTask: (id) => Promise.resolve(stored.get(id)) },
    principal: PRINCIPAL,
    request: { id: 'listen-1', taskIds: tasks.map((task) => task.id) },
    sink,
    options: DEFAULT_LISTEN_OPTIONS,
    serverInfo: { name: 'test', version: '1.0.0' },
    unroute: () => undefined,
  });
  await subscription.start();
  return { subscription, sink, kinds: () => sent.map(kindOf) };
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('the end of a task stream', () => {
  it('pushes the last final state alone; the result and the end follow a turn later', async () => {
    const task = working();
    const { subscription, sink, kinds } = await subscribe([task]);
    assert.deepEqual(kinds(), ['ack', 'working']);
    subscription.offer(complete(task, { content: [] }, Date.now()));
    assert.deepEqual(kinds(), ['ack', 'working', 'completed']);
    assert.equal(sink.closed, false, 'the stream is still open in the turn of the push');
    await nextTurn();
    assert.deepEqual(kinds(), ['ack', 'working', 'completed', 'result']);
    assert.equal(sink.closed, true);
  });

  it('sends the result once when the task is deleted in the turn after its push', async () => {
    const task = working();
    const { subscription, sink, kinds } = await subscribe([task]);
    subscription.offer(complete(task, { content: [] }, Date.now()));
    subscription.gone(task.id);
    await nextTurn();
    assert.deepEqual(kinds(), ['ack', 'working', 'completed', 'result']);
    assert.equal(sink.closed, true);
  });

  it('keeps the stream open while another task is still working', async () => {
    const [first, second] = [working(), working()];
    const { subscription, sink, kinds } = await subscribe([first, second]);
    subscription.offer(complete(first, { content: [] }, Date.now()));
    await nextTurn();
    assert.deepEqual(kinds(), ['ack', 'working', 'working', 'completed']);
    assert.equal(sink.closed, false);
    subscription.offer(complete(second, { content: [] }, Date.now()));
    await nextTurn();
    assert.deepEqual(kinds(), ['ack', 'working', 'working', 'completed', 'completed', 'result']);
    assert.equal(sink.closed, true);
  });

  it('ends at once when every task was final already when it was acknowledged', async () => {
    const task = complete(working(), { content: [] }, Date.now());
    const { sink, kinds } = await subscribe([task]);
    assert.deepEqual(kinds(), ['ack', 'completed', 'result']);
    assert.equal(sink.closed, true);
  });
});
