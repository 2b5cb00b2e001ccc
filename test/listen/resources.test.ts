import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Ledger, TaskrailClient, taskResourceUri } from '../../src/client/index.js';
import { configureListen, listenStats } from '../../src/server/listen/index.js';
import type { TaskStore } from '../../src/store/port.js';
import { openRedisStore } from '../../src/stores/redis/index.js';
import { waitFor } from '../helpers/wait.js';
import { tempDir } from '../client/support.js';
import { deletePrefix, REDIS_URL, uniquePrefix, urlWithPrefix } from '../redis/redis-env.js';
import { ackOf, openListen, rpc, startApp, type RawListen, type TestApp } from './support.js';

type Json = Record<string, unknown>;
const TOKENS = { 'tok-a': 'alice', 'tok-b': 'bob' };
const BURST = 300;
const UPDATED = 'notifications/resources/updated';

/** `printer`: BURST lines at once, then one more line after each of its gates (`KEY-0`, …). */
function addPrinter(app: TestApp, lines = 1): void {
  app.app.tool(
    'printer',
    { description: 'prints', task: { mode: 'required', pollIntervalMs: 60_000 } },
    async (args, ctx) => {
      const key = String(args['key']);
      if (args['gated'] === true) await app.gates.wait(`${key}-go`, ctx.signal);
      for (let i = 0; i < BURST; i++) await ctx.output(`burst ${i}\n`);
      for (let i = 0; i < lines; i++) {
        await app.gates.wait(`${key}-${i}`, ctx.signal);
        await ctx.output(`line ${i}\n`);
      }
      return { content: [{ type: 'text', text: 'printed' }] };
    },
  );
}

async function startPrinter(
  url: string,
  key: string,
  bearer?: string,
  gated = false,
): Promise<string> {
  const { body } = await rpc(
    url,
    'tools/call',
    { name: 'printer', arguments: { key, gated } },
    { bearer, name: 'printer' },
  );
  const result = body['result'] as Json | undefined;
  if (result?.['resultType'] !== 'task') throw new Error(`no task: ${JSON.stringify(body)}`);
  return String(result['taskId']);
}

function listenResources(url: string, uris: string[], bearer?: string): Promise<RawListen> {
  return openListen(url, undefined, {
    declare: false,
    extra: { resourceSubscriptions: uris },
    ...(bearer === undefined ? {} : { bearer }),
  });
}

function granted(listen: RawListen): unknown {
  const params = ackOf(listen)?.['params'] as { notifications?: Json } | undefined;
  return params?.notifications?.['resourceSubscriptions'];
}

function updatesOf(listen: RawListen, uri: string): number {
  return listen.messages.filter(
    (m) => m['method'] === UPDATED && (m['params'] as Json)['uri'] === uri,
  ).length;
}

const ended = (listen: RawListen) => (listen.done ? true : undefined);

describe('resource subscriptions on the 2026-07-28 wire (subscriptions/listen)', () => {
  let app: TestApp;

  before(async () => {
    app = await startApp({ tokens: TOKENS });
    addPrinter(app);
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
    addPrinter(app, LINES);
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
    let worker: TestApp;
    let front: TestApp;
    const stores: TaskStore[] = [];

    before(async () => {
      const url = urlWithPrefix(prefix);
      stores.push(await openRedisStore(url), await openRedisStore(url));
      worker = await startApp({ tokens: TOKENS, store: stores[0] as TaskStore });
      front = await startApp({
        tokens: TOKENS,
        store: stores[1] as TaskStore,
        runtime: { executor: 'none' },
      });
      addPrinter(worker, 2);
      addPrinter(front, 2);
    });
    after(async () => {
      await front.close();
      await worker.close();
      for (const store of stores) await store.close();
      await deletePrefix(prefix);
    });

    it('a stream on one replica is told of output another replica writes', async () => {
      const taskId = await startPrinter(worker.url, 'cross', 'tok-a');
      const uri = taskResourceUri(taskId, 'output');
      const listen = await listenResources(front.url, [uri], 'tok-a');
      await waitFor('the ack', () => ackOf(listen));
      assert.deepEqual(granted(listen), [uri]);
      await waitFor('the burst written', async () => {
        const read = await rpc(
          front.url,
          'resources/read',
          { uri },
          { bearer: 'tok-a', name: uri },
        );
        const text = ((read.body['result'] as { contents?: { text?: string }[] } | undefined)
          ?.contents?.[0]?.text ?? '') as string;
        return text.includes(`burst ${BURST - 1}\n`) || undefined;
      });
      const before = updatesOf(listen, uri);
      worker.gates.release('cross-0');
      await waitFor(
        'an update for a line written on the other replica',
        () => updatesOf(listen, uri) > before || undefined,
      );
      worker.gates.release('cross-1');
      await waitFor('the stream to end with the task', () => ended(listen), { timeoutMs: 20_000 });
    });
  },
);
