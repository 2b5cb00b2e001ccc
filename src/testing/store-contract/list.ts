import assert from 'node:assert/strict';
import type { ListQuery } from '../../store/port.js';
import { cancel, complete } from '../../task/transitions.js';
import type { DefineCase, Harness } from './harness.js';

async function listAll(h: Harness, query: ListQuery): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 1000; page++) {
    const result = await h.store.list({ ...query, ...(cursor === undefined ? {} : { cursor }) });
    ids.push(...result.tasks.map((task) => task.id));
    if (result.nextCursor === undefined) return ids;
    assert.ok(result.tasks.length > 0, 'a page with a next cursor is not empty');
    cursor = result.nextCursor;
  }
  throw new Error('pagination did not end');
}

export function registerListCases(define: DefineCase): void {
  define('list orders newest first and returns stored records', async (h) => {
    const created = [];
    for (let i = 0; i < 5; i++) {
      created.push(await h.create({ arguments: { i } }));
      h.clock.advance(1);
    }
    const page = await h.store.list({});
    assert.deepEqual(page.tasks, [...created].reverse());
    assert.equal(page.nextCursor, undefined);
  });

  define('list filters by principal, statuses and tool', async (h) => {
    const a1 = await h.create({ principal: 'alice', tool: 'greet' });
    const a2 = await h.create({ principal: 'alice', tool: 'slow' });
    const b1 = await h.create({ principal: 'bob', tool: 'greet' });
    const now = h.clock.now();
    await h.store.compareAndSet(complete(a2, { content: [] }, now), a2.revision);
    await h.store.compareAndSet(cancel(b1, now), b1.revision);
    const ids = async (query: ListQuery) => (await listAll(h, query)).sort();
    assert.deepEqual(await ids({ principal: 'alice' }), [a1.id, a2.id].sort());
    assert.deepEqual(await ids({ principal: 'carol' }), []);
    assert.deepEqual(await ids({ tool: 'greet' }), [a1.id, b1.id].sort());
    assert.deepEqual(await ids({ statuses: ['working'] }), [a1.id]);
    assert.deepEqual(await ids({ statuses: ['completed', 'cancelled'] }), [a2.id, b1.id].sort());
    assert.deepEqual(await ids({ statuses: [] }), []);
    assert.deepEqual(await ids({ principal: 'alice', tool: 'greet', statuses: ['working'] }), [
      a1.id,
    ]);
    assert.deepEqual(await ids({ principal: 'bob', statuses: ['working'] }), []);
  });

  define('list pages with an opaque cursor, each task exactly once', async (h) => {
    const all: string[] = [];
    for (let i = 0; i < 23; i++) {
      all.push((await h.create({ principal: i % 3 === 0 ? 'bob' : 'alice' })).id);
      if (i % 4 === 0) h.clock.advance(1); // several tasks share a millisecond
    }
    const paged = await listAll(h, { limit: 4 });
    assert.equal(paged.length, 23);
    assert.deepEqual([...paged].sort(), [...all].sort());
    const firstPage = await h.store.list({ limit: 4 });
    assert.equal(typeof firstPage.nextCursor, 'string');
    assert.deepEqual(await listAll(h, { limit: 5 }), paged, 'the order is stable');
    const bobs = await listAll(h, { principal: 'bob', limit: 2 });
    assert.equal(bobs.length, 8);
  });

  define('list refuses a cursor it did not give out, before any query', async (h) => {
    await h.create({});
    const forged = (json: string): string => Buffer.from(json).toString('base64url');
    const cursors = ['!!!', 'abc', forged('{"a":1}'), forged('[-1,"x"]'), forged('["1","x"]')];
    cursors.push(forged('[1e400,"x"]'), forged('[1,""]'), 'A'.repeat(100_000));
    for (const cursor of cursors) {
      await assert.rejects(h.store.list({ cursor }), (error: unknown) => {
        const { code, message } = error as { code?: unknown; message?: unknown };
        assert.equal(code, 'INVALID_ARGUMENT', `cursor ${cursor.slice(0, 20)}`);
        assert.match(String(message), /not one this server gave out/);
        return true;
      });
    }
    assert.equal((await h.store.list({})).tasks.length, 1, 'the store still answers');
  });

  define('list caps a page at 1000 tasks', async (h) => {
    for (let i = 0; i < 1003; i++) await h.store.create(h.record({ ttlMs: null }));
    const page = await h.store.list({ limit: 5000 });
    assert.equal(page.tasks.length, 1000);
    assert.ok(page.nextCursor);
    const rest = await h.store.list({ limit: 5000, cursor: page.nextCursor });
    assert.equal(rest.tasks.length, 3);
    assert.equal(rest.nextCursor, undefined);
  });

  define('list leaves out expired tasks', async (h) => {
    await h.create({ ttlMs: 100 });
    const kept = await h.create({ ttlMs: 10_000 });
    h.clock.advance(100);
    assert.deepEqual((await h.store.list({})).tasks, [kept]);
  });
}
