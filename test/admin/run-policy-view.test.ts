import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { TaskRecord } from '../../src/task/record.js';
import { runNode } from '../helpers/child.js';
import { waitFor } from '../helpers/wait.js';
import { ADMIN, call, startHarness, type Harness, type Loose } from './harness.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const TEN_MINUTES = 600_000;

describe('run policy made visible: attempts and durable waits', () => {
  let h: Harness;
  let backingOff: TaskRecord;
  let napping: TaskRecord;
  let once: TaskRecord;
  let startedAt: number;
  before(async () => {
    h = await startHarness();
    startedAt = Date.now();
    backingOff = await h.create('backing_off');
    napping = await h.create('napping');
    once = await h.create('once');
    // Both waits are written once the first run ends; the third task simply completes.
    await waitFor('the backoff, the sleep and the completion', async () => {
      const [b, n, o] = await Promise.all(
        [backingOff, napping, once].map((t) => h.store.get(t.id)),
      );
      const settled = b?.attempt === 2 && n?.statusMessage?.startsWith('sleeping') === true;
      return settled && o?.status === 'completed' ? true : undefined;
    });
  });
  after(() => h.close());

  const list = async (query = '') =>
    (await call(h.base, `/dashboard/api/tasks${query}`, ADMIN)).body.tasks as Loose[];
  const byId = (tasks: Loose[], id: string) => tasks.find((t: Loose) => t.id === id);

  it('lists each task with its attempts of the limit and its wait', async () => {
    const tasks = await list();
    const retrying = byId(tasks, backingOff.id);
    assert.equal(retrying.status, 'working');
    assert.equal(retrying.attempt, 2);
    assert.equal(retrying.maxAttempts, 3);
    assert.equal(retrying.waiting.kind, 'backoff');
    assert.equal(retrying.waiting.due, false);
    const wakeAt = Date.parse(retrying.waiting.until as string);
    assert.ok(
      wakeAt >= startedAt + TEN_MINUTES - 1000,
      `${retrying.waiting.until} is the wake time`,
    );
    assert.ok(wakeAt <= Date.now() + TEN_MINUTES + 1000);
    const sleeping = byId(tasks, napping.id);
    assert.deepEqual(
      [sleeping.attempt, sleeping.maxAttempts, sleeping.waiting.kind],
      [1, 3, 'sleep'],
    );
    const done = byId(tasks, once.id);
    assert.equal(done.maxAttempts, 1, 'retry: false allows one attempt');
    assert.equal(done.waiting, undefined);
  });

  it('filters by the kind of wait, and refuses an unknown one', async () => {
    const ids = async (query: string) => (await list(query)).map((t: Loose) => t.id as string);
    assert.deepEqual(await ids('?waiting=backoff'), [backingOff.id]);
    assert.deepEqual(await ids('?waiting=sleep,permit'), [napping.id]);
    assert.deepEqual(await ids('?waiting=sleep&status=completed'), []);
    const bad = await call(h.base, '/dashboard/api/tasks?waiting=nap', ADMIN);
    assert.equal(bad.status, 400);
    assert.match(bad.body.message as string, /backoff, sleep or permit/);
  });

  it('shows the wait in the detail of a task', async () => {
    const { body } = await call(h.base, `/dashboard/api/tasks/${napping.id}`, ADMIN);
    assert.equal(body.waiting.kind, 'sleep');
    assert.match(body.statusMessage as string, /^sleeping until /);
  });

  it('shows attempts and waits in taskrail admin list and show', async () => {
    const url = `sqlite:${h.dbPath}`;
    const listed = await runNode(MAIN, ['admin', 'list', '--store', url, '--waiting', 'backoff']);
    assert.equal(listed.code, 0, listed.stderr);
    const lines = listed.stdout.trim().split('\n');
    assert.equal(lines.length, 2, listed.stdout);
    assert.match(
      lines[1] ?? '',
      new RegExp(
        `^${backingOff.id} +working +backing_off .* +2 of 3 +backoff until \\S+Z +attempt 2 of 3 at`,
      ),
    );
    const all = await runNode(MAIN, ['admin', 'list', '--store', url, '--tool', 'once']);
    assert.match(all.stdout, /completed +once +alice +\S+ +1 of 1 +-$/m);
    const shown = await runNode(MAIN, ['admin', 'show', '--store', url, napping.id]);
    const record = JSON.parse(shown.stdout) as Loose;
    assert.equal(record.waiting.kind, 'sleep');
    assert.equal(record.maxAttempts, 3);
  });

  it('shows a task waiting for a concurrency permit until the holder ends', async () => {
    const holder = await h.create('single', { key: 'permit-holder' });
    const queued = await h.create('single', { key: 'permit-queued' });
    const waitingIds = async () =>
      (await list('?waiting=permit')).map((t: Loose) => t.id as string);
    await waitFor('the second task to wait for the permit', async () =>
      (await waitingIds()).includes(queued.id) ? true : undefined,
    );
    assert.deepEqual(await waitingIds(), [queued.id], 'the holder runs');
    const { body } = await call(h.base, `/dashboard/api/tasks/${queued.id}`, ADMIN);
    assert.deepEqual(body.waiting, { kind: 'permit', due: false });
    h.open('permit-holder');
    h.open('permit-queued');
    await waitFor('both to complete', async () => {
      const ends = await Promise.all([holder, queued].map((t) => h.store.get(t.id)));
      return ends.every((t) => t?.status === 'completed') ? true : undefined;
    });
    assert.deepEqual(await waitingIds(), []);
    assert.equal(byId(await list(), queued.id).waiting, undefined);
  });

  it('tells what to write for an unknown --waiting', async () => {
    const bad = await runNode(MAIN, [
      'admin',
      'list',
      '--store',
      `sqlite:${h.dbPath}`,
      '--waiting',
      'nap',
    ]);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /--waiting.*backoff, sleep or permit/s);
  });
});
