import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { TaskSubscriber } from '../../src/client/subscribe.js';

/** A fetch that records each listen request's task ids and leaves the stream unanswered. */
function recordingFetch(opened: string[][]): typeof fetch {
  return (_input, init) => {
    const body = JSON.parse(String(init?.body)) as {
      params: { notifications: { taskIds: string[] } };
    };
    opened.push(body.params.notifications.taskIds);
    return new Promise<Response>((_resolve, reject) => {
      init?.signal?.addEventListener('abort', () => reject(init.signal?.reason));
    });
  };
}

describe('TaskSubscriber opens a stream a millisecond after a quiet spell', () => {
  let opened: string[][];
  let subscriber: TaskSubscriber;

  beforeEach(() => {
    mock.timers.enable({ apis: ['setTimeout', 'setImmediate'], now: 1_000_000 });
    opened = [];
    subscriber = new TaskSubscriber({
      url: 'http://127.0.0.1:9/mcp',
      framing: {
        protocolVersion: '2026-07-28',
        clientInfo: { name: 'test', version: '0' },
        clientCapabilities: {},
      },
      fetch: recordingFetch(opened),
    });
  });
  afterEach(() => {
    subscriber.close();
    mock.timers.reset();
  });

  it('sends nothing in the turn of the follow or the next one, and one request after 1 ms', async () => {
    const a = subscriber.follow('task-a');
    const b = subscriber.follow('task-b');
    await Promise.resolve();
    assert.deepEqual(opened, [], 'no listen request in the follow turn');
    mock.timers.tick(0);
    await Promise.resolve();
    assert.deepEqual(
      opened,
      [],
      'no listen request on the next turn: the CPU is handed back first',
    );
    mock.timers.tick(1);
    await Promise.resolve();
    assert.deepEqual(opened, [['task-a', 'task-b']], 'both tasks share one stream');
    a.close();
    b.close();
  });
});
