import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { after, before, describe, it } from 'node:test';
import { listenStats } from '../../src/server/listen/index.js';
import { waitFor } from '../helpers/wait.js';
import {
  notificationsOf,
  openListen,
  startApp,
  startHold,
  type RawListen,
  type TestApp,
} from './support.js';

const COUNT = 1000;

setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

function heapAfterGc(): number {
  collect();
  collect();
  return process.memoryUsage().heapUsed;
}

async function inBatches<T>(
  count: number,
  size: number,
  make: (i: number) => Promise<T>,
): Promise<T[]> {
  const out: T[] = [];
  for (let start = 0; start < count; start += size) {
    const batch = Array.from({ length: Math.min(size, count - start) }, (_, k) => make(start + k));
    out.push(...(await Promise.all(batch)));
  }
  return out;
}

const statusOf = (l: RawListen, status: string): boolean =>
  notificationsOf(l).some((n) => (n['params'] as Record<string, unknown>)['status'] === status);

describe(`${COUNT} concurrent subscriptions on one server`, () => {
  let t: TestApp;
  before(async () => (t = await startApp({ listen: { maxSubscriptionsPerPrincipal: COUNT } })));
  after(() => t.close());

  it('all receive their notifications, with memory that goes back when they end', async () => {
    const ids = await inBatches(COUNT, 50, (i) => startHold(t.url, `s${i}`));
    const baseline = heapAfterGc();
    const listens = await inBatches(COUNT, 100, (i) => openListen(t.url, [ids[i]]));
    await waitFor('every initial state', () => listens.every((l) => statusOf(l, 'working')), {
      timeoutMs: 30_000,
      intervalMs: 50,
    });
    const open = heapAfterGc();
    assert.equal(listenStats(t.app.runtime).subscriptions, COUNT);

    const released = performance.now();
    for (let i = 0; i < COUNT; i += 1) t.gates.release(`s${i}`, `done ${i}`);
    await Promise.all(listens.map((l) => l.ended));
    const deliveredMs = performance.now() - released;
    listens.forEach((l, i) => {
      const last = notificationsOf(l).at(-1)?.['params'] as Record<string, unknown>;
      assert.equal(last['status'], 'completed');
      assert.deepEqual((last['result'] as { content: unknown[] }).content, [
        { type: 'text', text: `done ${i}` },
      ]);
    });
    await waitFor('the hub is empty', () => listenStats(t.app.runtime).subscriptions === 0);
    assert.equal(listenStats(t.app.runtime).routedTasks, 0);
    const closed = heapAfterGc();
    const perStream = (open - baseline) / COUNT;
    process.stdout.write(
      `${COUNT} streams: ${Math.round(perStream)} B heap each while open (server and client in one process), ` +
        `all ${COUNT} completions delivered ${deliveredMs.toFixed(0)} ms after release, ` +
        `heap after close ${((closed - baseline) / 1024).toFixed(0)} KiB over the baseline\n`,
    );
    assert.ok(perStream < 64 * 1024, `${perStream} B per open stream`);
    assert.ok(
      closed - baseline < (open - baseline) / 2 + 2 * 1024 * 1024,
      'memory is given back when streams end',
    );
  });
});
