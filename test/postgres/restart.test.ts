import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RawDispatch } from '../../src/client/rpc-http.js';
import type { TaskStore } from '../../src/store/port.js';
import { openPostgresStore } from '../../src/stores/postgres/index.js';
import { deployment, reach, tryCreateTask, type Deployment } from '../helpers/deployment.js';
import { ownPostgresMissing, startOwnPostgres, type OwnPostgres } from '../helpers/own-postgres.js';
import { waitFor } from '../helpers/wait.js';

const TOOLS = '.build/test/postgres/fixtures/e2e-tools.js';
/** A run cut by the crash is handed on when its lease (15 s) runs out, at the next scan. */
const SETTLE_MS = 90_000;

const unavailable = ownPostgresMissing();

/**
 * A `serve --no-worker` replica and a `taskrail worker` on a PostgreSQL server of the test's
 * own, which crashes (`pg_ctl stop -m immediate`) while a task runs and comes back: nothing
 * exits, the task cut by the crash and tasks made after it complete, and change events and
 * graphile-worker's wake-ups flow again (a resumed task runs, a cancel reaches its handler).
 */
describe('postgres deployment across a database crash and restart', { skip: unavailable }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-pg-restart-'));
  let own: OwnPostgres;
  let processes: Deployment;
  let replica: RawDispatch;
  let observer: TaskStore;
  const completedSeen = new Set<string>();
  let resyncs = 0;

  before(async () => {
    own = await startOwnPostgres();
    const store = `${own.url}?schema=restart`;
    const logPath = join(dir, 'events.log');
    processes = deployment({ store, tools: TOOLS, logPath, logLevel: 'error' });
    replica = await processes.replica();
    await processes.worker();
    observer = await openPostgresStore(store, { onWarning: () => undefined });
    observer.events.on('task:transition', ({ task, to }) => {
      if (to === 'completed') completedSeen.add(task.id);
    });
    observer.events.on('store:resync', () => (resyncs += 1));
  });

  after(async () => {
    await processes?.stopAll();
    await observer?.close();
    await own?.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  const find = (event: string, taskId: string) =>
    waitFor(
      `${event} of task ${taskId}`,
      () => processes.events().find((e) => e.event.startsWith(event) && e.taskId === taskId),
      { timeoutMs: SETTLE_MS },
    );
  /** While the database recovers the replica refuses calls; it takes them again after. */
  const create = (name: string, args: object) =>
    waitFor(`tools/call ${name} to be taken`, () => tryCreateTask(replica, name, args), {
      timeoutMs: SETTLE_MS,
      intervalMs: 200,
    });

  it('completes the task the crash cut and the tasks made after it; no process exits', async () => {
    const cut = await create('durable_job', { seconds: 2 });
    await find('running-attempt-1', cut);
    await own.stop(); // pg_ctl stop -m immediate: a crash
    const refused = await replica({
      method: 'tools/call',
      params: { name: 'durable_job', arguments: { seconds: 0 } },
    });
    // The server's trouble, not the tool's answer: a retryable -32603 without any detail.
    assert.equal(
      refused.kind,
      'error',
      `refused while the database is down: ${JSON.stringify(refused)}`,
    );
    assert.equal(refused.kind === 'error' && refused.error.code, -32603);
    assert.doesNotMatch(JSON.stringify(refused), /postgres|127\.0\.0\.1|ECONNREFUSED/);
    await own.start();

    // This process's store listens again (and says that events may have been missed)...
    await waitFor('the observer to listen again', () => resyncs > 0, { timeoutMs: SETTLE_MS });
    const after = await create('durable_job', { seconds: 0 });
    await reach(replica, after, 'completed', SETTLE_MS);
    await reach(replica, cut, 'completed', SETTLE_MS);
    const cutEvents = processes.events().filter((e) => e.taskId === cut);
    assert.equal(cutEvents.filter((e) => e.event === 'first-step').length, 1, 'a step ran twice');
    // ...and hears the worker's writes again.
    await waitFor('the write of the worker seen through change events', () =>
      completedSeen.has(after),
    );

    const asking = await create('ask_then_wait', {});
    await reach(replica, asking, 'input_required', SETTLE_MS);
    const answer = { name: { action: 'accept', content: { name: 'Ada' } } };
    const answered = await replica({
      method: 'tasks/update',
      params: { taskId: asking, inputResponses: answer },
    });
    assert.equal(answered.kind, 'result');
    await find('answered-Ada', asking);
    assert.equal(
      (await replica({ method: 'tasks/cancel', params: { taskId: asking } })).kind,
      'result',
    );
    await find('aborted-at-', asking);

    for (const child of processes.children) {
      assert.equal(child.process.exitCode, null, `a process exited: ${child.stderr()}`);
      assert.equal(child.process.signalCode, null);
    }
  });
});
