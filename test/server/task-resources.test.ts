import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskServer, type TaskServer } from '../../src/server/index.js';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import { tempDir } from '../stores/temp-dir.js';
import { waitFor } from '../helpers/wait.js';

const MAX = 2000;
const REPORT = Array.from({ length: 3000 }, (_, i) => `row ${i} ✓ 😀\n`).join('');
const LINES = Array.from({ length: 40 }, (_, i) => `step ${i}\n`).join('');

interface Block {
  type: string;
  text?: string;
  uri?: string;
  size?: number;
}

function serverWithTools(store: SqliteTaskStore): TaskServer {
  const app = createTaskServer({
    store,
    name: 'resources-test',
    version: '1.0.0',
    auth: { tokens: { 'tok-a': 'alice', 'tok-b': 'bob' } },
    maxResultChars: MAX,
  });
  const _meta = { 'anthropic/maxResultSizeChars': 100_000 };
  app.tool('big_report', { description: 'a big report', task: true, _meta }, () => ({
    content: [{ type: 'text', text: REPORT }],
  }));
  app.tool('printer', { description: 'prints lines', task: true }, async (_args, ctx) => {
    for (const line of LINES.split(/(?<=\n)/)) await ctx.output(line);
    return { content: [{ type: 'text', text: 'printed' }] };
  });
  return app;
}

async function connect(url: string, token: string, version: '2025-11-25' | '2026-07-28') {
  const client = new Client(
    { name: 'resources-test', version: '1.0.0' },
    version === '2026-07-28' ? { versionNegotiation: { mode: { pin: version } } } : {},
  );
  const headers = { Authorization: `Bearer ${token}` };
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }),
  );
  return client;
}

async function readText(
  client: Client,
  uri: string,
): Promise<{ text: string; meta: Record<string, unknown> }> {
  const read = await client.readResource({ uri });
  const first = read.contents[0] as { text?: string; _meta?: Record<string, unknown> };
  return { text: first.text ?? '', meta: first._meta ?? {} };
}

async function refusal(client: Client, uri: string): Promise<{ code: unknown; data: unknown }> {
  try {
    await client.readResource({ uri });
  } catch (error) {
    const { code, data } = error as { code?: unknown; data?: unknown };
    return { code, data };
  }
  assert.fail(`${uri} should be refused`);
}

for (const version of ['2025-11-25', '2026-07-28'] as const) {
  describe(`task resources on the ${version} wire`, () => {
    const dir = tempDir();
    let store: SqliteTaskStore;
    let app: TaskServer;
    let alice: Client;
    let bob: Client;

    before(async () => {
      store = new SqliteTaskStore(join(dir.path, 'tasks.db'));
      app = serverWithTools(store);
      const { url } = await app.listen(0, '127.0.0.1');
      alice = await connect(url, 'tok-a', version);
      bob = await connect(url, 'tok-b', version);
    });

    after(async () => {
      await alice.close();
      await bob.close();
      await app.close(1000);
      await store.close();
      dir.remove();
    });

    it('hands out a big result shortened, and pages return exact slices of the whole', async () => {
      const result = await alice.callTool({ name: 'big_report', arguments: {} });
      const content = result.content as Block[];
      const link = content.find((block) => block.type === 'resource_link');
      assert.ok(link?.uri, 'a resource_link to the whole result');
      assert.match(link.uri, /^taskrail:\/\/tasks\/[^/]+\/result$/);
      assert.equal(link.size, Buffer.byteLength(REPORT));
      const text = content[0]?.text ?? '';
      assert.match(text, new RegExp(`it has ${REPORT.length} characters`));
      assert.ok(text.includes(`${link.uri}?offset=`), 'says how to read the rest');
      const chars = content.reduce((sum, block) => sum + (block.text?.length ?? 0), 0);
      assert.ok(chars + JSON.stringify(link).length <= MAX, `within ${MAX} characters`);

      const slice = await readText(alice, `${link.uri}?offset=1000&length=500`);
      assert.equal(slice.meta['taskrail/offset'], 1000);
      assert.equal(slice.text, REPORT.slice(1000, 1000 + slice.text.length));
      assert.ok(slice.text.length >= 499 && slice.text.length <= 500, 'never half a pair');
      assert.equal(slice.meta['taskrail/total'], REPORT.length);
      let whole = '';
      for (let offset = 0; offset < REPORT.length;) {
        const page = await readText(alice, `${link.uri}?offset=${offset}`);
        assert.ok(page.text.length <= MAX, 'a read returns at most the limit');
        whole += page.text;
        offset = page.meta['taskrail/nextOffset'] as number;
      }
      assert.equal(whole, REPORT);
      const past = await readText(alice, `${link.uri}?offset=${REPORT.length + 10}&length=5`);
      assert.equal(past.text, '');

      const unknown = await refusal(alice, 'taskrail://tasks/never-was/result');
      const foreign = await refusal(bob, link.uri);
      assert.deepEqual(foreign, { ...unknown, data: { uri: link.uri } });
      const listed = await alice.listResources();
      assert.ok(listed.resources.some((resource) => resource.uri === link.uri));
      const bobs = await bob.listResources();
      assert.ok(!bobs.resources.some((resource) => resource.uri === link.uri), 'owner-only list');
    });

    it('serves a task output as it was written, and lists the templates', async () => {
      const result = await alice.callTool({ name: 'printer', arguments: {} });
      assert.equal((result.content as Block[])[0]?.text, 'printed');
      const listed = await alice.listResources();
      const output = listed.resources.find((resource) => resource.uri.endsWith('/output'));
      assert.ok(output, 'the output is listed');
      assert.equal((await readText(alice, output.uri)).text, LINES);
      assert.equal(
        (await readText(alice, `${output.uri}?offset=7&length=7`)).text,
        LINES.slice(7, 14),
      );
      const templates = await alice.listResourceTemplates();
      assert.deepEqual(templates.resourceTemplates.map((template) => template.uriTemplate).sort(), [
        'taskrail://tasks/{taskId}/output{?offset,length}',
        'taskrail://tasks/{taskId}/result{?offset,length}',
        'taskrail://tasks/{taskId}/structured{?offset,length}',
      ]);
      const listed2 = await alice.listTools();
      const report = listed2.tools.find((tool) => tool.name === 'big_report');
      assert.deepEqual(
        report?._meta?.['anthropic/maxResultSizeChars'],
        100_000,
        'the _meta passes',
      );
      const caps = alice.getServerCapabilities();
      assert.deepEqual(caps?.resources, { subscribe: true, listChanged: true });
    });
  });
}

describe('resource subscriptions on a 2025-11-25 session', () => {
  const dir = tempDir();
  let store: SqliteTaskStore;
  let app: TaskServer;
  let release: () => void = () => undefined;

  before(async () => {
    store = new SqliteTaskStore(join(dir.path, 'tasks.db'));
    app = serverWithTools(store);
    const gate = new Promise<void>((resolve) => (release = resolve));
    app.tool(
      'slow_printer',
      { description: 'prints, waits, prints', task: true },
      async (_a, ctx) => {
        await ctx.output('first\n');
        await gate;
        await ctx.output('second\n');
        return { content: [{ type: 'text', text: 'done' }] };
      },
    );
  });

  after(async () => {
    await app.close(1000);
    await store.close();
    dir.remove();
  });

  it('sends notifications/resources/updated as the output grows; not to another principal', async () => {
    const { url } = await app.listen(0, '127.0.0.1');
    const alice = await connect(url, 'tok-a', '2025-11-25');
    const bob = await connect(url, 'tok-b', '2025-11-25');
    try {
      const updates: string[] = [];
      alice.setNotificationHandler('notifications/resources/updated', (notification) => {
        updates.push(String(notification.params.uri));
      });
      const called = alice.callTool({ name: 'slow_printer', arguments: {} });
      const outputUri = await waitFor('the output to be listed', async () => {
        const listed = await alice.listResources();
        return listed.resources.find((resource) => resource.uri.endsWith('/output'))?.uri;
      });
      await alice.subscribeResource({ uri: outputUri });
      const foreign = await refusal(bob, outputUri).catch(() => undefined);
      assert.ok(foreign, 'bob cannot read it');
      await assert.rejects(bob.subscribeResource({ uri: outputUri }));
      release();
      await called;
      await waitFor('an update for the output', () => updates.includes(outputUri));
      assert.equal((await readText(alice, outputUri)).text, 'first\nsecond\n');
    } finally {
      await alice.close();
      await bob.close();
    }
  });
});

describe('anonymous callers on 2025-11-25 sessions', () => {
  const dir = tempDir();
  let store: SqliteTaskStore;
  let app: TaskServer;

  before(() => {
    store = new SqliteTaskStore(join(dir.path, 'tasks.db'));
    app = createTaskServer({ store, name: 'resources-anon', version: '1.0.0' });
    app.tool('printer', { description: 'prints lines', task: true }, async (_args, ctx) => {
      for (const line of LINES.split(/(?<=\n)/)) await ctx.output(line);
      return { content: [{ type: 'text', text: 'printed' }] };
    });
  });

  after(async () => {
    await app.close(1000);
    await store.close();
    dir.remove();
  });

  it('each session reads, lists and follows only the task resources it created', async () => {
    const { url } = await app.listen(0, '127.0.0.1');
    const anonymous = async () => {
      const client = new Client({ name: 'resources-anon', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      return client;
    };
    const first = await anonymous();
    const second = await anonymous();
    try {
      await first.callTool({ name: 'printer', arguments: {} });
      const listed = await first.listResources();
      const output = listed.resources.find((resource) => resource.uri.endsWith('/output'));
      assert.ok(output, 'the creating session lists its output');
      assert.equal((await readText(first, output.uri)).text, LINES);
      const unknown = await refusal(second, 'taskrail://tasks/never-was/output');
      const foreign = await refusal(second, output.uri);
      assert.deepEqual(foreign, { ...unknown, data: { uri: output.uri } });
      const theirs = await second.listResources();
      assert.ok(!theirs.resources.some((resource) => resource.uri === output.uri));
      await assert.rejects(second.subscribeResource({ uri: output.uri }));
      await first.subscribeResource({ uri: output.uri });
    } finally {
      await first.close();
      await second.close();
    }
  });
});
