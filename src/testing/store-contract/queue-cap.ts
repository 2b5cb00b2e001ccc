import assert from 'node:assert/strict';
import type { CreateOptions, TaskStore } from '../../store/port.js';
import type { NewTaskInput } from '../../task/record.js';
import { complete, requestInput } from '../../task/transitions.js';
import type { DefineCase, Harness } from './harness.js';

const QUESTION = { method: 'elicitation/create', params: { message: 'Go on?' } };

/** The titles a store may name in `skip` (a Redis Cluster counts before its write). */
export const QUEUE_CAP_RACE = 'creates racing at the cap never pass it';

function capped(maxUnfinished: number): CreateOptions {
  return { maxUnfinished };
}

/** Creates with the cap; 'full' when refused (TaskrailError QUEUE_FULL). */
async function tryCreate(
  h: Harness,
  store: TaskStore,
  max: number,
  overrides: Partial<NewTaskInput> = {},
) {
  try {
    return await store.create(h.record(overrides), capped(max));
  } catch (error) {
    if ((error as { code?: unknown }).code === 'QUEUE_FULL') return 'full' as const;
    throw error;
  }
}

export function registerQueueCapCases(define: DefineCase): void {
  define(
    'a create past maxUnfinished is refused, writes nothing, and a finish frees a place',
    async (h) => {
      const first = await tryCreate(h, h.store, 2);
      const second = await tryCreate(h, h.store, 2);
      assert.ok(first !== 'full' && second !== 'full');
      assert.deepEqual([first.position, second.position], [1, 2], 'each place, itself included');
      const refused = h.record();
      await assert.rejects(h.store.create(refused, capped(2)), { code: 'QUEUE_FULL' });
      assert.equal(await h.store.get(refused.id), undefined, 'the refused create wrote nothing');
      assert.notEqual(
        await tryCreate(h, h.store, 2, { principal: 'bob' }),
        'full',
        'per principal',
      );
      const now = h.clock.now();
      await h.store.compareAndSet(requestInput(first.task, { q: QUESTION }, now), 1);
      assert.equal(await tryCreate(h, h.store, 2), 'full', 'input_required still counts');
      await h.store.compareAndSet(complete(second.task, { content: [] }, now), 1);
      const after = await tryCreate(h, h.store, 2);
      assert.ok(after !== 'full', 'a finished task gave its place back');
      assert.equal(after.position, 2);
      assert.equal(await h.store.countUnfinished?.('alice', 10), 2);
    },
  );

  define('an expired task gives its place back once swept', async (h) => {
    assert.notEqual(await tryCreate(h, h.store, 1, { ttlMs: 500 }), 'full');
    assert.equal(await tryCreate(h, h.store, 1), 'full');
    h.clock.advance(1000);
    await h.store.sweepExpired(100); // a store may count an expired task until it is swept
    assert.notEqual(await tryCreate(h, h.store, 1), 'full');
  });

  define('a repeated idempotency key at the cap returns its task', async (h) => {
    const first = await tryCreate(h, h.store, 2, { idempotencyKey: 'lost-reply' });
    assert.notEqual(await tryCreate(h, h.store, 2), 'full');
    assert.ok(first !== 'full');
    const retry = await tryCreate(h, h.store, 2, { idempotencyKey: 'lost-reply' });
    assert.ok(retry !== 'full', 'the retry got its task, not the refusal');
    assert.equal(retry.created, false);
    assert.equal(retry.task.id, first.task.id);
    const other = h.record({ idempotencyKey: 'new-key' });
    await assert.rejects(h.store.create(other, capped(2)), { code: 'QUEUE_FULL' });
    const later = await h.store.create(h.record({ idempotencyKey: 'new-key' }));
    assert.equal(later.created, true, 'the refused create left its key free');
  });

  define(QUEUE_CAP_RACE, async (h) => {
    const peer = await h.peer();
    for (let round = 0; round < Math.min(h.raceRounds, 10); round++) {
      const principal = `racer-${round}`;
      const outcomes = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          tryCreate(h, i % 2 === 0 ? h.store : peer, 3, { principal }),
        ),
      );
      const created = outcomes.filter((outcome) => outcome !== 'full');
      assert.equal(created.length, 3, `round ${round}: exactly the cap was created`);
      const places = created.map((outcome) => outcome.position).sort();
      assert.deepEqual(places, [1, 2, 3], `round ${round}: one place each`);
    }
  });
}
