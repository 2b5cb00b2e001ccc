import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isGoneLocalOwner, newOwnerId } from '../../src/runtime/owner.js';
import { TaskRuntime } from '../../src/runtime/runtime.js';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import { startNode } from '../helpers/child.js';
import { waitFor } from '../helpers/wait.js';
import { durableTools } from '../fixtures/durable-tools.js';

const CHILD = new URL('../fixtures/durable-child.js', import.meta.url).pathname;
const silent = { info() {}, warn() {}, error() {} };
const LONG_LEASE = '60000';

function workspace() {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-takeover-'));
  return { db: join(dir, 'tasks.db'), journal: join(dir, 'journal.log') };
}

const journalLines = (path: string) =>
  existsSync(path) ? readFileSync(path, 'utf8').trim().split('\n') : [];

describe('lease holders that are gone', () => {
  it('tells a process that exited from one that runs, on this machine only', async () => {
    const script = `import('${new URL('../../src/runtime/owner.js', import.meta.url).href}')
      .then((m) => { console.log(m.newOwnerId()); process.stdin.resume(); });`;
    const child = startNode('--input-type=module', ['-e', script]);
    const [owner] = (await child.line(/^\S+@[0-9a-f]{16}$/)) as unknown as [string];
    assert.equal(isGoneLocalOwner(owner), false, 'still running');
    await child.kill('SIGKILL');
    assert.equal(isGoneLocalOwner(owner), true, 'exited');
    assert.equal(isGoneLocalOwner(newOwnerId()), false, 'this process');
    assert.equal(isGoneLocalOwner(owner.replace(/@.*$/, '@0123456789abcdef')), false, 'elsewhere');
    assert.equal(isGoneLocalOwner(owner.replace(/@.*$/, '')), false, 'no machine key');
    assert.equal(isGoneLocalOwner('not an owner'), false);
  });

  it('re-runs a killed process’s task at once, without waiting out its lease', async () => {
    const { db, journal } = workspace();
    const child = startNode(CHILD, [db, journal, LONG_LEASE, 'two_steps'], { HOLD: '1' });
    const [, id] = (await child.line(/^task two_steps (\S+)$/)) as unknown as [string, string];
    await waitFor('the handler to start', () =>
      journalLines(journal).includes(`running ${id} attempt 1`),
    );
    await child.kill('SIGKILL');
    const store = new SqliteTaskStore(db);
    const runtime = new TaskRuntime({
      store,
      tools: durableTools(journal),
      leaseMs: Number(LONG_LEASE),
      logger: silent,
    });
    try {
      runtime.start();
      const done = await waitFor('the task to complete on the new process', async () => {
        const task = await store.get(id);
        return task?.status === 'completed' ? task : undefined;
      });
      assert.equal(done.attempt, 2);
      const lines = journalLines(journal);
      assert.equal(lines.filter((l) => l === `first ${id}`).length, 1, 'the step was replayed');
      assert.ok(lines.includes(`second ${id}`));
    } finally {
      await runtime.stop(1000);
      await store.close();
    }
  });

  it('leaves the tasks of a holder that is still running alone', async () => {
    const { db, journal } = workspace();
    const child = startNode(CHILD, [db, journal, LONG_LEASE, 'two_steps'], { HOLD: '1' });
    try {
      const [, id] = (await child.line(/^task two_steps (\S+)$/)) as unknown as [string, string];
      await waitFor('the handler to start', () =>
        journalLines(journal).includes(`running ${id} attempt 1`),
      );
      const store = new SqliteTaskStore(db);
      const runtime = new TaskRuntime({ store, tools: durableTools(journal), logger: silent });
      try {
        runtime.start(); // a started executor has free slots to take tasks over with
        assert.equal(await runtime.recoverNow(), 0);
        const [held] = await store.findLeased(10);
        assert.equal(held?.id, id);
        assert.match(held?.owner ?? '', new RegExp(`:${child.process.pid}:`));
      } finally {
        await runtime.stop(1000);
        await store.close();
      }
    } finally {
      await child.kill('SIGKILL');
    }
  });
});
