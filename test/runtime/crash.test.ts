import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { TaskRuntime } from '../../src/runtime/runtime.js';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import { isTerminal } from '../../src/task/status.js';
import { startNode } from '../helpers/child.js';
import { waitFor } from '../helpers/wait.js';
import { durableTools } from '../fixtures/durable-tools.js';

const CHILD = new URL('../fixtures/durable-child.js', import.meta.url).pathname;
const silent = { info() {}, warn() {}, error() {} };

function workspace() {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-crash-'));
  return { db: join(dir, 'tasks.db'), journal: join(dir, 'journal.log') };
}

function journalLines(path: string): string[] {
  return existsSync(path) ? readFileSync(path, 'utf8').trim().split('\n') : [];
}

describe('crash recovery on SQLite (kill -9)', () => {
  it('keeps finished and parked tasks, re-runs working ones without repeating steps, fails retry:false', async () => {
    const { db, journal } = workspace();
    const child = startNode(CHILD, [db, journal, '1000', 'quick,two_steps,not_twice,ask'], {
      HOLD: '1',
    });
    await child.line(/^ready$/);
    const ids = Object.fromEntries(
      child.lines
        .filter((l) => l.startsWith('task '))
        .map((l) => l.split(' ').slice(1) as [string, string]),
    ) as Record<'quick' | 'two_steps' | 'not_twice' | 'ask', string>;
    const observer = new SqliteTaskStore(db);
    await waitFor('child to reach its resting points', async () => {
      const lines = journalLines(journal);
      const quick = await observer.get(ids.quick);
      const ask = await observer.get(ids.ask);
      return (
        quick?.status === 'completed' &&
        ask?.status === 'input_required' &&
        lines.includes(`running ${ids.two_steps} attempt 1`) &&
        lines.includes(`not_twice ${ids.not_twice}`)
      );
    });
    const quickBefore = await observer.get(ids.quick);
    await child.kill('SIGKILL');
    await observer.close();

    const store = new SqliteTaskStore(db);
    const runtime = new TaskRuntime({
      store,
      tools: durableTools(journal),
      leaseMs: 1000,
      logger: silent,
    });
    try {
      assert.equal((await store.get(ids.two_steps))?.status, 'working');
      runtime.start();
      const twoSteps = await waitFor('two_steps to finish on the new process', async () => {
        const task = await store.get(ids.two_steps);
        return task && isTerminal(task.status) ? task : undefined;
      });
      assert.equal(twoSteps.status, 'completed');
      assert.equal(twoSteps.attempt, 2);
      assert.deepEqual(twoSteps.result?.content, [
        { type: 'text', text: 'first result + second result' },
      ]);
      const notTwice = await waitFor('not_twice to end', async () => {
        const task = await store.get(ids.not_twice);
        return task && isTerminal(task.status) ? task : undefined;
      });
      assert.equal(notTwice.status, 'failed');
      assert.match(notTwice.error?.message ?? '', /interrupted/);

      const lines = journalLines(journal);
      const count = (line: string) => lines.filter((l) => l === line).length;
      assert.equal(count(`first ${ids.two_steps}`), 1, 'the finished step was not executed again');
      assert.equal(count(`second ${ids.two_steps}`), 1);
      assert.equal(count(`not_twice ${ids.not_twice}`), 1, 'a retry:false tool never ran twice');

      assert.deepEqual(await store.get(ids.quick), quickBefore, 'a completed task is unchanged');
      const ask = await store.get(ids.ask);
      assert.equal(ask?.status, 'input_required', 'a parked task stays parked');
      await runtime.answerInput(ids.ask, 'crash-test', {
        confirm: { action: 'accept', content: { ok: true } },
      });
      const answered = await waitFor('parked task to complete', async () => {
        const task = await store.get(ids.ask);
        return task?.status === 'completed' ? task : undefined;
      });
      assert.deepEqual(answered.result?.content, [{ type: 'text', text: 'answered accept' }]);
    } finally {
      await runtime.stop(1000);
      await store.close();
    }
  });

  it('delivers a cancellation made by another process to the running handler', async (t) => {
    const { db, journal } = workspace();
    const child = startNode(CHILD, [db, journal, '3000', 'wait_for_cancel']);
    try {
      const [, id] = (await child.line(/^task wait_for_cancel (\S+)$/)) as unknown as [
        string,
        string,
      ];
      await waitFor('handler to start', () => journalLines(journal).includes(`waiting ${id}`));
      const store = new SqliteTaskStore(db);
      const runtime = new TaskRuntime({
        store,
        tools: durableTools(journal),
        executor: 'none',
        logger: silent,
      });
      const cancelledAt = Date.now();
      const cancelled = await runtime.cancelTask(id, 'crash-test');
      assert.equal(cancelled?.status, 'cancelled');
      const abortedAt = await waitFor('the other process to abort the handler', () => {
        const line = journalLines(journal).find((l) => l.startsWith(`aborted ${id} `));
        return line === undefined ? undefined : Number(line.split(' ')[2]);
      });
      const delay = abortedAt - cancelledAt;
      t.diagnostic(`cross-process cancellation delay: ${delay} ms (heartbeat 1000 ms)`);
      assert.ok(delay < 2500, `cancellation took ${delay} ms`);
      assert.equal((await store.get(id))?.status, 'cancelled');
      await store.close();
    } finally {
      await child.kill();
    }
  });
});
