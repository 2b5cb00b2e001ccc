import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { StdioChild, type WireMessage } from './stdio-child.js';
import { TASKS_CAPS } from './support.js';

const SUBSCRIPTION = 'io.modelcontextprotocol/subscriptionId';

function of(id: number, method: string) {
  return (message: WireMessage): boolean =>
    message.method === method &&
    (message.params?.['_meta'] as Record<string, unknown> | undefined)?.[SUBSCRIPTION] === id;
}

describe('serve --stdio pushes notifications/tasks on subscriptions/listen', () => {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-stdio-push-'));
  let stdio: StdioChild;

  before(() => {
    stdio = new StdioChild(`sqlite:${join(dir, 'tasks.db')}`);
  });

  after(async () => {
    await stdio.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function createTask(name: string, args: object = {}): Promise<string> {
    const reply = await stdio.request('tools/call', { name, arguments: args }, TASKS_CAPS);
    assert.equal(reply.result?.['resultType'], 'task', JSON.stringify(reply));
    return reply.result?.['taskId'] as string;
  }

  it('acknowledges, sends each change, and ends with the listen result', async () => {
    const taskId = await createTask('slow_compute', { seconds: 1 });
    const from = stdio.messages.length;
    const listenId = stdio.send(
      'subscriptions/listen',
      { notifications: { taskIds: [taskId, 'AAAAAAAAAAAAAAAAAAAAAA'] } },
      TASKS_CAPS,
    );
    const ack = await stdio.next(
      'the ack',
      of(listenId, 'notifications/subscriptions/acknowledged'),
      from,
    );
    assert.deepEqual((ack.params?.['notifications'] as { taskIds: string[] }).taskIds, [taskId]);
    const done = await stdio.next(
      'the completed notification',
      (m) => of(listenId, 'notifications/tasks')(m) && m.params?.['status'] === 'completed',
      from,
    );
    assert.equal(done.params?.['taskId'], taskId);
    assert.ok(done.params?.['result'], 'the result is inlined as in tasks/get');
    const end = await stdio.next('the listen result', (m) => m.id === listenId && !m.method, from);
    assert.equal(end.result?.['resultType'], 'complete');
    const order = stdio.messages.slice(from).filter((m) => m === ack || m === done || m === end);
    assert.deepEqual(order, [ack, done, end], 'ack first, the listen result last');
  });

  it('refuses a listen for task ids without the tasks extension (-32021)', async () => {
    const reply = await stdio.request(
      'subscriptions/listen',
      { notifications: { taskIds: ['AAAAAAAAAAAAAAAAAAAAAA'] } },
      {},
    );
    assert.equal(reply.error?.code, -32021);
  });

  it('stops sending once the client cancels the listen request', async () => {
    const taskId = await createTask('confirm_delete', { filename: 'a.txt' });
    const from = stdio.messages.length;
    const listenId = stdio.send(
      'subscriptions/listen',
      { notifications: { taskIds: [taskId] } },
      TASKS_CAPS,
    );
    await stdio.next('the ack', of(listenId, 'notifications/subscriptions/acknowledged'), from);
    await stdio.next(
      'input_required',
      (m) => of(listenId, 'notifications/tasks')(m) && m.params?.['status'] === 'input_required',
      from,
    );
    stdio.write({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: listenId, reason: 'done listening' },
    });
    const cancelled = await stdio.request('tasks/cancel', { taskId }, TASKS_CAPS);
    assert.equal(cancelled.result?.['resultType'], 'complete');
    // The cancel's own event would reach a live subscription before this later answer.
    const got = await stdio.request('tasks/get', { taskId }, TASKS_CAPS);
    assert.equal(got.result?.['status'], 'cancelled');
    const after = stdio.messages.slice(from);
    const statuses = after
      .filter(of(listenId, 'notifications/tasks'))
      .map((m) => m.params?.['status']);
    assert.ok(!statuses.includes('cancelled'), `no notification after the cancel: ${statuses}`);
    assert.ok(!after.some((m) => m.id === listenId && !m.method), 'no listen result either');
  });
});
