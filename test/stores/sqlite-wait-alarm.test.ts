import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import { newTaskId } from '../../src/task/ids.js';
import { newTaskRecord } from '../../src/task/record.js';
import { waitFor } from '../helpers/wait.js';
import { tempDir } from './temp-dir.js';

const dir = tempDir('taskrail-wait-alarm-');
after(() => dir.remove());
let counter = 0;
const freshPath = () => join(dir.path, `alarm-${++counter}.db`);

/** A timer may be late by a scheduling hiccup on a busy machine, never early. */
const LATE_MS = 250;

async function waitingTask(store: SqliteTaskStore, delayMs: number) {
  const task = newTaskRecord(
    {
      id: newTaskId(),
      principal: 'p',
      tool: 'nap',
      arguments: {},
      ttlMs: 60_000,
      pollIntervalMs: 1000,
    },
    Date.now(),
  );
  const { lease } = await store.create(task, { lease: { owner: 'worker', leaseMs: 30_000 } });
  assert.ok(lease);
  const wakeAt = await store.releaseUntil(task.id, lease.token, delayMs);
  assert.ok(wakeAt !== undefined);
  return { id: task.id, wakeAt };
}

function recorder() {
  const woken: { id: string; at: number }[] = [];
  return { woken, onDue: (id: string) => void woken.push({ id, at: Date.now() }) };
}

function assertOnTime(
  woken: { id: string; at: number }[],
  waits: { id: string; wakeAt: number }[],
) {
  for (const wait of waits) {
    const hit = woken.find((w) => w.id === wait.id);
    assert.ok(hit, `wait ${wait.id} was handed over`);
    const late = hit.at - wait.wakeAt;
    assert.ok(late >= 0, `handed over ${-late} ms early`);
    assert.ok(late < LATE_MS, `handed over ${late} ms late`);
  }
}

describe('SQLite wakes durable waits at their time', () => {
  it('hands each wait over at its wake time, re-armed by every earlier wait', async () => {
    const store = new SqliteTaskStore(freshPath());
    const { woken, onDue } = recorder();
    const stop = store.onWaitsDue(onDue);
    try {
      const late = await waitingTask(store, 900);
      const early = await waitingTask(store, 300);
      const middle = await waitingTask(store, 600);
      await waitFor('every wait', () => (woken.length >= 3 ? true : undefined), {
        timeoutMs: 5000,
      });
      assert.deepEqual(
        woken.map((w) => w.id),
        [early.id, middle.id, late.id],
      );
      assertOnTime(woken, [early, middle, late]);
      const runnable = new Set(await store.findRunnable(10));
      assert.deepEqual(runnable, new Set([early.id, middle.id, late.id]), 'and each is runnable');
    } finally {
      stop();
      await store.close();
    }
  });

  it('wakes the waits already in the file when a new process opens it', async () => {
    const path = freshPath();
    const before = new SqliteTaskStore(path);
    const waits = [await waitingTask(before, 700), await waitingTask(before, 1200)];
    await before.close();
    // The restart: a fresh store on the same file knows nothing but what the file says.
    const reopened = new SqliteTaskStore(path);
    const { woken, onDue } = recorder();
    const stop = reopened.onWaitsDue(onDue);
    try {
      await waitFor('both waits', () => (woken.length >= 2 ? true : undefined), {
        timeoutMs: 5000,
      });
      assertOnTime(woken, waits);
    } finally {
      stop();
      await reopened.close();
    }
  });

  it('hands a due wait over once, also while nobody claims it', async () => {
    const store = new SqliteTaskStore(freshPath());
    const { woken, onDue } = recorder();
    const stop = store.onWaitsDue(onDue);
    try {
      const wait = await waitingTask(store, 100);
      await waitFor('the wait', () => (woken.length >= 1 ? true : undefined), { timeoutMs: 5000 });
      const later = await waitingTask(store, 400);
      await waitFor('the later wait', () =>
        woken.some((w) => w.id === later.id) ? true : undefined,
      );
      assert.deepEqual(
        woken.map((w) => w.id),
        [wait.id, later.id],
        'the unclaimed first wait is not handed over again',
      );
    } finally {
      stop();
      await store.close();
    }
  });
});
