import assert from 'node:assert/strict';
import type { TaskStore, TaskTextKind } from '../../store/port.js';
import { readRange, sliceText, splitText } from '../../store/text.js';
import type { DefineCase } from './harness.js';

/** The slice of a task's text as a reader sees it (undefined when the task is gone). */
async function slice(
  store: TaskStore,
  id: string,
  kind: TaskTextKind,
  offset: number,
  length: number,
): Promise<{ text: string; start: number; end: number; dropped: number } | undefined> {
  const range = readRange(offset, length);
  const stored = await store.readText(id, kind, range.offset, range.length);
  return stored === undefined ? undefined : sliceText(stored, offset, length);
}

async function appendAll(store: TaskStore, id: string, kind: TaskTextKind, text: string) {
  for (const chunk of splitText(text)) {
    const outcome = await store.appendText(id, kind, chunk);
    assert.ok(outcome.ok);
  }
}

/** Text with multi-byte characters and surrogate pairs (emoji) spread through it. */
function mixedText(length: number): string {
  const parts = ['line ', 'ü ✓ ', '😀', '\n', 'a'.repeat(37)];
  let text = '';
  for (let i = 0; text.length < length; i++) text += parts[i % parts.length];
  return text.slice(0, length).replace(/[\uD800-\uDBFF]$/, 'x');
}

export function registerTextCases(define: DefineCase): void {
  define('texts read back by offset and length in exact slices, per task and kind', async (h) => {
    const a = await h.create();
    const b = await h.create();
    const whole = mixedText(200_000);
    await appendAll(h.store, a.id, 'result', whole);
    for (const line of ['first\n', 'second 😀\n', 'third\n']) {
      assert.ok((await h.store.appendText(a.id, 'output', line)).ok);
    }
    await appendAll(h.store, b.id, 'output', 'other task\n');
    const peer = await h.peer();
    assert.equal((await slice(peer, a.id, 'result', 0, 1_000_000))?.text, whole);
    for (const [offset, length] of [
      [0, 10],
      [65_530, 20],
      [131_071, 70_000],
      [199_990, 50],
    ] as const) {
      const read = await slice(peer, a.id, 'result', offset, length);
      const expected = whole.slice(read?.start, (read?.start ?? 0) + (read?.text.length ?? 0));
      assert.equal(read?.text, expected);
      assert.ok(Math.abs((read?.start ?? 0) - offset) <= 1, 'a cut moves by one at most');
      assert.equal(read?.end, whole.length);
    }
    assert.deepEqual(await slice(peer, a.id, 'output', 6, 9), {
      text: 'second 😀',
      start: 6,
      end: 22,
      dropped: 0,
    });
    assert.equal((await slice(peer, a.id, 'output', 500, 10))?.text, '', 'past the end: empty');
    assert.equal((await slice(peer, b.id, 'output', 0, 100))?.text, 'other task\n');
    assert.deepEqual(await peer.readText(b.id, 'result', 0, 100), {
      chunks: [],
      end: 0,
      dropped: 0,
    });
  });

  define('a slice never splits a surrogate pair', async (h) => {
    const task = await h.create();
    assert.ok((await h.store.appendText(task.id, 'output', 'ab😀cd')).ok);
    assert.deepEqual(await slice(h.store, task.id, 'output', 0, 3), {
      text: 'ab',
      start: 0,
      end: 6,
      dropped: 0,
    });
    assert.equal(
      (await slice(h.store, task.id, 'output', 3, 3))?.text,
      '😀c',
      'starts on the pair',
    );
    assert.equal((await slice(h.store, task.id, 'output', 2, 1))?.text, '😀', 'never half of it');
  });

  define('a bounded text drops its oldest chunks whole and keeps counting', async (h) => {
    const task = await h.create();
    let outcome;
    for (let i = 0; i < 10; i++) {
      outcome = await h.store.appendText(task.id, 'output', `line ${i}\n`, { maxChars: 25 });
    }
    assert.deepEqual(outcome, { ok: true, end: 70, dropped: 49 });
    const peer = await h.peer();
    const kept = await peer.readText(task.id, 'output', 0, 1000);
    assert.deepEqual(kept, {
      chunks: [
        { start: 49, text: 'line 7\n' },
        { start: 56, text: 'line 8\n' },
        { start: 63, text: 'line 9\n' },
      ],
      end: 70,
      dropped: 49,
    });
    assert.deepEqual(await slice(peer, task.id, 'output', 0, 10), {
      text: 'line 7\nlin',
      start: 49,
      end: 70,
      dropped: 49,
    });
    assert.equal((await slice(peer, task.id, 'output', 60, 100))?.text, ' 8\nline 9\n');
  });

  define("after another claim, the old attempt's appends are refused as fenced", async (h) => {
    const task = await h.create();
    const old = await h.store.claim(task.id, 'worker-old', 1000);
    assert.ok(old);
    assert.ok(
      (await h.store.appendText(task.id, 'output', 'a\n', { fence: { leaseToken: old.token } })).ok,
    );
    h.clock.advance(1000);
    const now = await h.store.claim(task.id, 'worker-new', 60_000);
    assert.ok(now);
    const late = await h.store.appendText(task.id, 'output', 'late\n', {
      fence: { leaseToken: old.token },
    });
    assert.deepEqual(late, { ok: false, fenced: true });
    const current = await h.store.appendText(task.id, 'output', 'b\n', {
      fence: { leaseToken: now.token },
    });
    assert.deepEqual(current, { ok: true, end: 4, dropped: 0 });
    assert.equal((await slice(h.store, task.id, 'output', 0, 100))?.text, 'a\nb\n');
  });

  define('texts of unknown or expired tasks: appends refused, reads absent', async (h) => {
    await assert.rejects(h.store.appendText('no-such-task', 'output', 'x'));
    assert.equal(await h.store.readText('no-such-task', 'output', 0, 10), undefined);
    const task = await h.create({ ttlMs: 1000 });
    assert.ok((await h.store.appendText(task.id, 'output', 'kept\n')).ok);
    await assert.rejects(h.store.appendText(task.id, 'output', 'x'.repeat(64 * 1024 + 1)));
    h.clock.advance(1000);
    assert.equal(await h.store.readText(task.id, 'output', 0, 10), undefined);
    await assert.rejects(h.store.appendText(task.id, 'output', 'late'));
  });

  define('sweeping deletes the texts with the task', async (h) => {
    const task = await h.create({ ttlMs: 1000 });
    await appendAll(h.store, task.id, 'output', 'some output\n');
    await appendAll(h.store, task.id, 'result', 'a big result');
    await appendAll(h.store, task.id, 'structured', '{"a":1}');
    h.clock.advance(1000);
    assert.deepEqual(await h.store.sweepExpired(10), [task.id]);
    const again = { ...h.record(), id: task.id };
    assert.equal((await h.store.create(again)).created, true);
    for (const kind of ['output', 'result', 'structured'] as const) {
      assert.deepEqual(await h.store.readText(task.id, kind, 0, 100), {
        chunks: [],
        end: 0,
        dropped: 0,
      });
    }
  });
}
