/**
 * The task-resource cases every store runs on both wires (SQLite in task-resources.test.ts,
 * Redis and PostgreSQL in their folders): a big result and a big structuredContent shortened
 * and read back in exact pages, output read while and after it is written, owner-only reads,
 * lists and subscriptions, updates as the output grows.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import * as z from 'zod/v4';
import { createTaskServer, type TaskServer } from '../../src/server/index.js';
import type { TaskStore } from '../../src/store/port.js';
import { waitFor } from '../helpers/wait.js';
import {
  assertExactSlices,
  assertShortened,
  assertUnknownTo,
  readPage,
  readWhole,
  type Block,
} from '../helpers/shortened.js';
import {
  ended,
  granted,
  listenResources,
  sdkClient,
  UPDATED,
  updatesOf,
} from '../listen/resource-listen.js';
import { ackOf, getTask, rpc } from '../listen/support.js';

const AS_ALICE = { bearer: 'tok-a', name: 'big_rows' };

export const MAX = 2000;
export const REPORT = Array.from({ length: 3000 }, (_, i) => `row ${i} ✓ 😀\n`).join('');
export const LINES = Array.from({ length: 40 }, (_, i) => `step ${i}\n`).join('');
const ROWS = { rows: Array.from({ length: 300 }, (_, n) => ({ n, name: `name ${n} ✓` })) };
const ROWS_JSON = JSON.stringify(ROWS);

/** A store for one describe block, and how to give it back. */
export interface OpenedStore {
  store: TaskStore;
  dispose(): Promise<void>;
}

/** `slow_printer` prints `first`, waits for its key's gate, prints `second`. */
class KeyedGates {
  readonly #opened = new Map<string, () => void>();
  readonly #gates = new Map<string, Promise<void>>();

  wait(key: string): Promise<void> {
    let gate = this.#gates.get(key);
    if (gate === undefined) {
      gate = new Promise((resolve) => this.#opened.set(key, resolve));
      this.#gates.set(key, gate);
    }
    return gate;
  }

  open(key: string): void {
    void this.wait(key);
    this.#opened.get(key)?.();
  }
}

function serverWithTools(store: TaskStore, gates: KeyedGates): TaskServer {
  const app = createTaskServer({
    store,
    name: 'resources-test',
    version: '1.0.0',
    auth: { tokens: { 'tok-a': 'alice', 'tok-b': 'bob' } },
    maxResultChars: MAX,
    maxReadChars: MAX,
    logger: { info() {}, warn() {}, error() {} },
  });
  const _meta = { 'anthropic/maxResultSizeChars': 100_000 };
  app.tool('big_report', { description: 'a big report', task: true, _meta }, () => ({
    content: [{ type: 'text', text: REPORT }],
  }));
  const rows = () => ({ content: [{ type: 'text', text: ROWS_JSON }], structuredContent: ROWS });
  app.tool('big_rows', { description: 'rows, no schema', task: true }, rows);
  const outputSchema = z.object({ rows: z.array(z.object({ n: z.number(), name: z.string() })) });
  app.tool('checked_rows', { description: 'rows', task: true, outputSchema }, rows);
  app.tool('printer', { description: 'prints lines', task: true }, async (_args, ctx) => {
    for (const line of LINES.split(/(?<=\n)/)) await ctx.output(line);
    return { content: [{ type: 'text', text: 'printed' }] };
  });
  app.tool('slow_printer', { description: 'prints, waits, prints', task: true }, async (a, ctx) => {
    await ctx.output('first\n');
    await gates.wait(String(a['key']));
    await ctx.output('second\n');
    return { content: [{ type: 'text', text: 'done' }] };
  });
  return app;
}

type Wire = '2025-11-25' | '2026-07-28';

/** Registers the task-resource cases on a store `open` gives, for both wires. */
export function describeTaskResources(storeName: string, open: () => Promise<OpenedStore>): void {
  for (const wire of ['2025-11-25', '2026-07-28'] as const) {
    describe(`task resources on ${storeName}, ${wire} wire`, () => taskResourceCases(wire, open));
  }
}

function taskResourceCases(wire: Wire, open: () => Promise<OpenedStore>): void {
  const gates = new KeyedGates();
  let opened: OpenedStore;
  let app: TaskServer;
  let url: string;
  let alice: Client;
  let bob: Client;

  before(async () => {
    opened = await open();
    app = serverWithTools(opened.store, gates);
    url = (await app.listen(0, '127.0.0.1')).url;
    alice = await sdkClient(url, 'tok-a', wire);
    bob = await sdkClient(url, 'tok-b', wire);
  });

  after(async () => {
    await alice.close();
    await bob.close();
    await app.close(1000);
    await opened.dispose();
  });

  const listed = async (client: Client, uri: string) =>
    (await client.listResources()).resources.some((resource) => resource.uri === uri);

  async function assertOwnerOnly(uri: string): Promise<void> {
    await assertUnknownTo(bob, uri);
    assert.ok(await listed(alice, uri), 'listed for its owner');
    assert.ok(!(await listed(bob, uri)), 'not listed for anybody else');
  }

  it('hands out a big result shortened, and pages return exact slices of the whole', async () => {
    const result = await alice.callTool({ name: 'big_report', arguments: {} });
    const link = assertShortened(result, REPORT, MAX);
    await assertExactSlices(alice, link.uri as string, REPORT);
    assert.equal(await readWhole(alice, link.uri as string, MAX), REPORT);
    await assertOwnerOnly(link.uri as string);
  });

  it('moves a big structuredContent of a tool without an outputSchema to /structured', async () => {
    const result = await alice.callTool({ name: 'big_rows', arguments: {} });
    assert.equal(result.structuredContent, undefined, 'moved out of the result');
    const link = assertShortened(result, ROWS_JSON, MAX, 'structured');
    const texts = (result.content as Block[]).filter((block) => block.type === 'text');
    assert.ok(!texts.some((block) => block.text === ROWS_JSON), 'its JSON copy went with it');
    await assertExactSlices(alice, link.uri as string, ROWS_JSON);
    assert.deepEqual(JSON.parse(await readWhole(alice, link.uri as string, MAX)), ROWS);
    await assertOwnerOnly(link.uri as string);
    if (wire === '2026-07-28') await assertTaskGetShortened(url);
  });

  it('keeps the structuredContent of a tool with an outputSchema whole', async () => {
    const result = await alice.callTool({ name: 'checked_rows', arguments: {} });
    assert.deepEqual(result.structuredContent, ROWS);
    const content = result.content as Block[];
    assert.ok(!content.some((block) => block.uri?.endsWith('/structured') === true));
    assertShortened(result, ROWS_JSON, MAX, 'result');
  });

  it('serves a task output as it was written, and lists the templates', async () => {
    const result = await alice.callTool({ name: 'printer', arguments: {} });
    assert.equal((result.content as Block[])[0]?.text, 'printed');
    const resources = (await alice.listResources()).resources;
    const output = resources.find((resource) => resource.name.endsWith('(printer)'));
    assert.ok(output, 'the output is listed');
    assert.equal((await readPage(alice, output.uri)).text, LINES);
    assert.equal(
      (await readPage(alice, `${output.uri}?offset=7&length=7`)).text,
      LINES.slice(7, 14),
    );
    await assertOwnerOnly(output.uri);
    const templates = await alice.listResourceTemplates();
    assert.deepEqual(templates.resourceTemplates.map((template) => template.uriTemplate).sort(), [
      'taskrail://tasks/{taskId}/output{?offset,length}',
      'taskrail://tasks/{taskId}/result{?offset,length}',
      'taskrail://tasks/{taskId}/structured{?offset,length}',
    ]);
    const report = (await alice.listTools()).tools.find((tool) => tool.name === 'big_report');
    assert.deepEqual(report?._meta?.['anthropic/maxResultSizeChars'], 100_000, 'the _meta passes');
    assert.deepEqual(alice.getServerCapabilities()?.resources, {
      subscribe: true,
      listChanged: true,
    });
  });

  it(`tells a subscriber as the output grows, and nobody else (${wire})`, async () => {
    const key = `grow-${wire}`;
    const called = alice.callTool({ name: 'slow_printer', arguments: { key } });
    const uri = await waitFor('the output to be listed', async () => {
      const { resources } = await alice.listResources();
      return resources.find((resource) => resource.name.endsWith('(slow_printer)'))?.uri;
    });
    const follow = await subscribe(wire, url, alice, bob, uri);
    await waitFor('the first line', async () => (await readPage(alice, uri)).text || undefined);
    const before = follow.updates();
    gates.open(key);
    await called;
    await waitFor('an update for the second line', () => follow.updates() > before || undefined);
    assert.equal((await readPage(alice, uri)).text, 'first\nsecond\n');
    await follow.close();
  });
}

/** `tasks/get` of a task created as one hands out the same shortened form as the inline call. */
async function assertTaskGetShortened(url: string): Promise<void> {
  const { body } = await rpc(url, 'tools/call', { name: 'big_rows', arguments: {} }, AS_ALICE);
  const taskId = String((body['result'] as Record<string, unknown>)['taskId']);
  const task = await waitFor('the task to complete', async () => {
    const got = await getTask(url, taskId, 'tok-a');
    return got['status'] === 'completed' ? got : undefined;
  });
  const result = task['result'] as { content?: unknown; structuredContent?: unknown };
  assert.equal(result.structuredContent, undefined);
  const link = assertShortened(result, ROWS_JSON, MAX, 'structured');
  assert.equal(link.uri, `taskrail://tasks/${taskId}/structured`);
}

interface Following {
  updates(): number;
  close(): Promise<void>;
}

/**
 * Alice follows `uri` on `wire` (2025-11-25 `resources/subscribe`, 2026-07-28 a listen stream
 * with `resourceSubscriptions`); bob's attempt is refused (2025) or granted nothing (2026).
 */
async function subscribe(
  wire: Wire,
  url: string,
  alice: Client,
  bob: Client,
  uri: string,
): Promise<Following> {
  if (wire === '2025-11-25') {
    let updates = 0;
    alice.setNotificationHandler(UPDATED, (n) => {
      if (n.params.uri === uri) updates += 1;
    });
    await alice.subscribeResource({ uri });
    await assert.rejects(bob.subscribeResource({ uri }), 'bob cannot subscribe');
    return { updates: () => updates, close: async () => undefined };
  }
  const refused = await listenResources(url, [uri], 'tok-b');
  await waitFor('bob’s stream to end', () => ended(refused));
  assert.deepEqual(granted(refused), [], 'bob is granted nothing');
  const listen = await listenResources(url, [uri], 'tok-a');
  await waitFor('the ack', () => ackOf(listen));
  assert.deepEqual(granted(listen), [uri]);
  return {
    updates: () => updatesOf(listen, uri),
    async close() {
      await waitFor('the stream to end with the task', () => ended(listen), { timeoutMs: 20_000 });
    },
  };
}
