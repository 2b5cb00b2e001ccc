import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Ledger, TaskrailClient, taskResourceUri } from '../../src/client/index.js';
import { configureListen, listenStats } from '../../src/server/listen/index.js';
import type { TaskStore } from '../../src/store/port.js';
import { openRedisStore } from '../../src/stores/redis/index.js';
import { waitFor } from '../helpers/wait.js';
import { tempDir } from '../client/support.js';
import { deletePrefix, REDIS_URL, uniquePrefix, urlWithPrefix } from '../redis/redis-env.js';
import {
  addPrinter,
  BURST,
  crossReplicaSubscriptionCases,
  ended,
  granted,
  listenResources,
  startPrinter,
  TOKENS,
  UPDATED,
  updatesOf,
} from './resource-listen.js';
import { ackOf, startApp, type TestApp } from './support.js';

type Json = Record<string, unknown>;

const withGates = (app: TestApp, lines = 1) =>
  addPrinter(app.app, (name, signal) => app.gates.wait(name, signal), lines);

describe('resource subscriptions on the 2026-07-28 wire (subscriptions/listen)', () => {
  let app: TestApp;

  before(async () => {
    app = await startApp({ tokens: TOKENS });
    withGates(app);
  });
  after(() => app.close());

  it('pushes coalesced updates as the output grows and one when the task ends, then ends', async () => {
    const taskId = await startPrinter(app.url, 'grow', 'tok-a', true);
    const uri = taskResourceUri(taskId, 'output');
    const listen = await listenResources(app.url, [uri], 'tok-a');
    assert.equal(listen.status, 200);
    await waitFor('the ack', () => ackOf(listen));
    assert.deepEqual(granted(listen), [uri]);
    // The whole burst is written while the stream is open.
    const started = Date.now();
    app.gates.release('grow-go');
    await waitFor('an update while the task runs', () => updatesOf(listen, uri) > 0 || undefined);
    const beforeEnd = listen.messages.length;
    app.gates.release('grow-0');
    await waitFor('the stream to end with the task', () => ended(listen), { timeoutMs: 20_000 });
    const elapsed = Date.now() - started;
    const updates = updatesOf(listen, uri);
    const later = listen.messages.slice(beforeEnd);
    assert.ok(
      later.some((m) => m['method'] === UPDATED),
      'an update once the task has ended',
    );
    const last = listen.messages.at(-1) as Json;
    assert.equal((last['result'] as Json | undefined)?.['resultType'], 'complete');
    // BURST + 1 writes, at most one notification per 250 ms (plus the first and the last).
    assert.ok(updates < BURST / 2, `coalesced: ${updates} updates for ${BURST + 1} writes`);
    assert.ok(
      updates <= Math.ceil(elapsed / 250) + 2,
      `${updates} updates in ${elapsed} ms: at most four a second`,
    );
    process.stdout.write(`# ${updates} updates for ${BURST + 1} writes in ${elapsed} ms\n`);
  });

  it('grants another principal nothing, exactly as an unknown resource', async () => {
    const taskId = await startPrinter(app.url, 'foreign', 'tok-a');
    const uri = taskResourceUri(taskId, 'output');
    const bob = await listenResources(app.url, [uri], 'tok-b');
    const unknown = await listenResources(
      app.url,
      [taskResourceUri('never-was', 'output')],
      'tok-b',
    );
    for (const listen of [bob, unknown]) {
      await waitFor('the refused stream to end', () => ended(listen));
      assert.deepEqual(granted(listen), []);
      assert.equal(
        listen.messages.some((m) => m['method'] === UPDATED),
        false,
      );
    }
    const alice = await listenResources(app.url, [uri, 'https://example.com/x'], 'tok-a');
    await waitFor('the ack', () => ackOf(alice));
    assert.deepEqual(granted(alice), [uri], 'only the caller’s own task resources');
    alice.close();
    app.gates.release('foreign-0');
  });

  it('counts each stream in the listen bounds, and refuses a bad filter clearly', async () => {
    const taskId = await startPrinter(app.url, 'bound', 'tok-a');
    const uri = taskResourceUri(taskId, 'output');
    configureListen(app.app.runtime, { maxSubscriptionsPerPrincipal: 1 });
    try {
      const first = await listenResources(app.url, [uri], 'tok-a');
      await waitFor('the ack', () => ackOf(first));
      assert.equal(listenStats(app.app.runtime).subscriptions, 1);
      const second = await listenResources(app.url, [uri], 'tok-a');
      assert.equal(second.status, 429);
      first.close();
      await waitFor('the stream to be given back', () =>
        listenStats(app.app.runtime).subscriptions === 0 ? true : undefined,
      );
    } finally {
      configureListen(app.app.runtime, { maxSubscriptionsPerPrincipal: 256 });
    }
    const bad = await listenResources(app.url, [42] as never, 'tok-a');
    assert.equal(bad.status, 400);
    assert.match(String((bad.error?.['error'] as Json)['message']), /resourceSubscriptions/);
    app.gates.release('bound-0');
  });
});

describe('client.resources.followOutput on the 2026-07-28 wire', () => {
  let app: TestApp;
  const LINES = 3;

  before(async () => {
    app = await startApp({ tokens: TOKENS });
    withGates(app, LINES);
  });
  after(() => app.close());

  it('is pushed: each line arrives long before the 60 s poll', async () => {
    const home = tempDir('resource-push');
    const client = new TaskrailClient({
      url: app.url,
      bearer: 'tok-a',
      ledger: Ledger.open(home.path),
    });
    try {
      const taskId = await startPrinter(app.url, 'follow', 'tok-a');
      const seen: string[] = [];
      const following = (async () => {
        for await (const chunk of client.resources.followOutput(taskId, {
          pollIntervalMs: 60_000,
        }))
          seen.push(chunk);
      })();
      await waitFor(
        'the burst',
        () => seen.join('').includes(`burst ${BURST - 1}\n`) || undefined,
        {
          timeoutMs: 20_000,
        },
      );
      for (let i = 0; i < LINES; i++) {
        app.gates.release(`follow-${i}`);
        await waitFor(`line ${i}`, () => seen.join('').includes(`line ${i}\n`) || undefined, {
          timeoutMs: 20_000,
        });
      }
      await following;
      assert.ok(seen.join('').endsWith('line 0\nline 1\nline 2\n'));
      assert.ok(app.count('subscriptions/listen') >= 1, 'followed over a listen stream');
    } finally {
      client.close();
      home.remove();
    }
  });
});

describe(
  'resource subscriptions across replicas (Redis)',
  { skip: REDIS_URL === undefined },
  () => {
    const prefix = uniquePrefix();
    crossReplicaSubscriptionCases(async () => {
      const url = urlWithPrefix(prefix);
      const stores: TaskStore[] = [await openRedisStore(url), await openRedisStore(url)];
      const worker = await startApp({ tokens: TOKENS, store: stores[0] as TaskStore });
      const front = await startApp({
        tokens: TOKENS,
        store: stores[1] as TaskStore,
        runtime: { executor: 'none' },
      });
      withGates(worker, 2);
      withGates(front, 2);
      return {
        writer: worker.url,
        reader: front.url,
        release: (name) => worker.gates.release(name),
        async close() {
          await front.close();
          await worker.close();
          for (const store of stores) await store.close();
          await deletePrefix(prefix);
        },
      };
    });
  },
);
