import assert from 'node:assert/strict';
import type { TaskStore, WriteFence } from '../../store/port.js';
import type { TaskRecord } from '../../task/record.js';
import { answerInput, cancel, complete, report, requestInput } from '../../task/transitions.js';
import type { DefineCase, Harness } from './harness.js';

const QUESTION = { method: 'elicitation/create', params: { message: 'Go on?' } };

function fenceOf(grant: { token: string } | undefined): WriteFence {
  assert.ok(grant, 'the claim should succeed');
  return { leaseToken: grant.token };
}

/** A fenced write that must pass; returns the stored record. */
async function fencedWrite(
  store: TaskStore,
  next: TaskRecord,
  fence: WriteFence,
): Promise<TaskRecord> {
  const outcome = await store.compareAndSet(next, next.revision - 1, fence);
  assert.ok(outcome.ok, `a write under the holder's own lease should pass (${next.status})`);
  return outcome.task;
}

/** A fenced write that must be refused as fenced and leave the task as `stored`. */
async function assertFencedOut(
  h: Harness,
  next: TaskRecord,
  fence: WriteFence,
  stored: TaskRecord,
): Promise<void> {
  const outcome = await h.store.compareAndSet(next, next.revision - 1, fence);
  assert.equal(outcome.ok, false, `a write under a lost lease must be refused (${next.status})`);
  assert.equal(outcome.fenced, true, 'the refusal says fenced, so the writer stops');
  assert.deepEqual(outcome.current, stored);
  assert.deepEqual(await h.store.get(stored.id), stored, 'a refused write changes nothing');
}

/** A task claimed by `old`, then (its lease expired) by `current`. */
async function takenOver(
  h: Harness,
): Promise<{ task: TaskRecord; old: WriteFence; now: WriteFence }> {
  const task = await h.create();
  const old = fenceOf(await h.store.claim(task.id, 'worker-old', 1000));
  h.clock.advance(1000);
  const now = fenceOf(await h.store.claim(task.id, 'worker-new', 60_000));
  return { task, old, now };
}

export function registerFencingCases(define: DefineCase): void {
  define("after another claim, the old attempt's writes are refused as fenced", async (h) => {
    const { task, old } = await takenOver(h);
    const t = h.clock.now();
    await assertFencedOut(h, report(task, 'late progress', t), old, task);
    await assertFencedOut(h, requestInput(task, { q: QUESTION }, t, 'late question'), old, task);
    await assertFencedOut(
      h,
      complete(task, { content: [{ type: 'text', text: 'late' }] }, t),
      old,
      task,
    );
    assert.deepEqual(await h.store.saveStep(task.id, 'late-step', { from: 'old' }, old), {
      ok: false,
      fenced: true,
    });
    assert.deepEqual(await h.store.loadSteps(task.id), {}, 'a refused step is not stored');
  });

  define("the current holder's writes pass, and its outcome drops the lease", async (h) => {
    const { task, old, now } = await takenOver(h);
    assert.deepEqual(await h.store.saveStep(task.id, 'fetch', { rows: 2 }, now), { ok: true });
    const progressed = await fencedWrite(h.store, report(task, 'half way', h.clock.now()), now);
    assert.deepEqual(await h.store.saveStep(task.id, 'fetch', { rows: 3 }, old), {
      ok: false,
      fenced: true,
    });
    assert.deepEqual(await h.store.loadSteps(task.id), { fetch: { rows: 2 } });
    const done = await fencedWrite(
      h.store,
      complete(progressed, { content: [] }, h.clock.now()),
      now,
    );
    assert.equal(done.status, 'completed');
    assert.deepEqual(await h.store.renewLease(task.id, now.leaseToken, 60_000), {
      held: false,
      status: 'completed',
    });
    // Terminal is final for everyone; the refusal is the ordinary one, not a fence.
    const late = await h.store.compareAndSet(
      report(progressed, 'late', h.clock.now()),
      progressed.revision,
      old,
    );
    assert.equal(late.ok, false);
    assert.equal(late.fenced === true, false, 'a finished task is not "fenced": it is final');
  });

  define('a takeover from a gone holder fences the old holder out at once', async (h) => {
    const task = await h.create();
    const old = fenceOf(await h.store.claim(task.id, 'worker-gone', 60_000));
    const now = fenceOf(
      await h.store.claim(task.id, 'worker-new', 60_000, { takeOverFrom: 'worker-gone' }),
    );
    await assertFencedOut(h, report(task, 'late', h.clock.now()), old, task);
    await fencedWrite(h.store, report(task, 'mine', h.clock.now()), now);
  });

  define('a racing late write from another connection never lands after a claim', async (h) => {
    const peer = await h.peer();
    for (let round = 0; round < Math.min(h.raceRounds, 10); round++) {
      const task = await h.create();
      const old = fenceOf(await h.store.claim(task.id, 'worker-old', 1000));
      h.clock.advance(1000);
      const [claim, late, step] = await Promise.all([
        peer.claim(task.id, 'worker-new', 60_000),
        h.store.compareAndSet(report(task, 'late', h.clock.now()), task.revision, old),
        h.store.saveStep(task.id, 'late', 1, old),
      ]);
      assert.ok(claim, `round ${round}: the claim of an expired lease succeeds`);
      // Whatever the order, nothing the old holder wrote may come after the claim.
      const afterClaim = await peer.compareAndSet(
        report(late.ok ? late.task : task, 'new', h.clock.now()),
        late.ok ? late.task.revision : task.revision,
        { leaseToken: claim.token },
      );
      assert.ok(afterClaim.ok, `round ${round}: the new holder writes`);
      assert.equal((await h.store.get(task.id))?.statusMessage, 'new');
      assert.deepEqual(await peer.loadSteps(task.id), step.ok ? { late: 1 } : {});
      assert.deepEqual(await h.store.saveStep(task.id, 'later', 1, old), {
        ok: false,
        fenced: true,
      });
    }
  });

  define('a released or parked lease admits no fenced write', async (h) => {
    const task = await h.create();
    const first = fenceOf(await h.store.claim(task.id, 'worker-1', 60_000));
    await h.store.releaseLease(task.id, first.leaseToken);
    await assertFencedOut(h, report(task, 'after release', h.clock.now()), first, task);
    const second = fenceOf(await h.store.claim(task.id, 'worker-2', 60_000));
    const asked = requestInput(task, { q: QUESTION }, h.clock.now());
    const parked = await fencedWrite(h.store, asked, second);
    const answered = answerInput(parked, { q: { action: 'accept' } }, h.clock.now()).task;
    const resumed = await h.store.compareAndSet(answered, parked.revision); // an answer: unfenced
    assert.ok(resumed.ok);
    await assertFencedOut(h, report(resumed.task, 'stale', h.clock.now()), second, resumed.task);
    assert.deepEqual(await h.store.saveStep(task.id, 's', 1, second), { ok: false, fenced: true });
  });

  define('an expired lease nobody claimed still admits its holder', async (h) => {
    // The fence is the token, not the clock: no other attempt ran, so nothing is overwritten.
    const task = await h.create();
    const fence = fenceOf(await h.store.claim(task.id, 'worker-1', 1000));
    h.clock.advance(5000);
    assert.deepEqual(await h.store.saveStep(task.id, 'fetch', 1, fence), { ok: true });
    const done = await fencedWrite(h.store, complete(task, { content: [] }, h.clock.now()), fence);
    assert.equal(done.status, 'completed');
  });

  define('unfenced writes still work while another attempt holds the lease', async (h) => {
    const task = await h.create();
    fenceOf(await h.store.claim(task.id, 'worker-1', 60_000));
    assert.deepEqual(await h.store.saveStep(task.id, 'holder', { owner: 'proxy' }), { ok: true });
    const cancelled = await h.store.compareAndSet(cancel(task, h.clock.now()), task.revision);
    assert.ok(cancelled.ok);
    assert.equal(cancelled.task.status, 'cancelled');
  });
}
