/**
 * Reading a whole result from any host (issue 38): a bare `resources/read` returns the whole
 * text up to `--max-read-chars` (Gemini CLI reads exactly the listed URI), `task_result` reads
 * parts by offset (Copilot CLI has no resource tool), the shortened notice names both ways, and
 * `notifications/resources/list_changed` tells the owner's sessions when a resource appears.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { waitFor } from '../helpers/wait.js';
import {
  hostClient,
  linkOf,
  numbered,
  ROWS,
  startProfileServer,
  textsOf,
  type ProfileServer,
  type ToolResult,
} from './profiles-fixture.js';

const LIST_CHANGED = 'notifications/resources/list_changed';

async function readText(client: Client, uri: string) {
  const read = await client.readResource({ uri });
  const first = read.contents[0] as { text?: string; _meta?: Record<string, unknown> };
  return { text: first.text ?? '', meta: first._meta ?? {} };
}

async function call(client: Client, name: string, args: Record<string, unknown>) {
  return (await client.callTool({ name, arguments: args })) as ToolResult;
}

const taskIdOf = (uri: string): string => uri.split('/')[3] ?? '';

describe('reading a whole result', () => {
  let server: ProfileServer;
  let small: ProfileServer;
  let client: Client;
  let smallClient: Client;

  before(async () => {
    server = await startProfileServer();
    small = await startProfileServer({ maxReadChars: 50_000 });
    client = await hostClient(server.url, 'some-host', '2026-07-28');
    smallClient = await hostClient(small.url, 'some-host', '2026-07-28');
  });
  after(async () => {
    await client.close();
    await smallClient.close();
    await server.close();
    await small.close();
  });

  it('a bare resources/read of a shortened result returns the whole text', async () => {
    const whole = numbered(200_000);
    const result = await call(client, 'report', { chars: 200_000 });
    const uri = linkOf(result);
    const read = await readText(client, uri);
    assert.equal(read.text.length, whole.length);
    assert.equal(read.text, whole);
    assert.equal(read.meta['taskrail/nextOffset'], 200_000);
  });

  it('past --max-read-chars a bare read stops there and says how to read on', async () => {
    const whole = numbered(120_000);
    const uri = linkOf(await call(smallClient, 'report', { chars: 120_000 }));
    const read = await readText(smallClient, uri);
    assert.ok(read.text.startsWith(whole.slice(0, 50_000)), 'the first 50,000 characters');
    const line = read.text.slice(50_000);
    assert.match(line, /stops at character 50000 of 120000/);
    assert.ok(line.includes(`${uri}?offset=50000&length=50000`), line);
    assert.equal(read.meta['taskrail/nextOffset'], 50_000);
    const page = await readText(smallClient, `${uri}?offset=50000&length=90000`);
    assert.equal(page.text, whole.slice(50_000, 100_000), 'a page is capped at the bound');
  });

  it('the shortened notice names the resource and task_result with an offset', async () => {
    const result = await call(client, 'report', { chars: 60_000 });
    const uri = linkOf(result);
    const [notice] = textsOf(result);
    const shown = /only the first (\d+) follow/.exec(notice ?? '')?.[1];
    assert.ok(shown !== undefined, notice);
    assert.ok(notice?.includes(`${uri}?offset=${shown}&length=40000`), notice);
    const tool = `task_result {"taskId":"${taskIdOf(uri)}","offset":${shown}}`;
    assert.ok(notice?.includes(tool), notice);
  });

  it('task_result with offset and length returns that part, saying where to go on', async () => {
    const whole = numbered(100_000);
    const taskId = taskIdOf(linkOf(await call(client, 'report', { chars: 100_000 })));
    const part = await call(client, 'task_result', { taskId, offset: 45_000, length: 1000 });
    const [text] = textsOf(part);
    const newline = (text ?? '').indexOf('\n');
    const header = (text ?? '').slice(0, newline);
    assert.equal(text?.slice(newline + 1), whole.slice(45_000, 46_000));
    assert.match(header, /Characters 45000 to 46000 of 100000/);
    assert.ok(header.includes(`{"taskId": "${taskId}", "offset": 46000}`), header);
    assert.equal(part.structuredContent, undefined, 'hosts that show only structuredContent');
    const last = await call(client, 'task_result', { taskId, offset: 99_900 });
    assert.match(textsOf(last)[0] ?? '', /of 100000 .*This is the end/);
    assert.ok((textsOf(last)[0] ?? '').endsWith(whole.slice(99_900)));
  });

  it('task_result reads the JSON of structuredContent with part "structured"', async () => {
    const rows = await call(client, 'rows', {});
    const taskId = await lastTaskId(server);
    assert.deepEqual(rows.structuredContent, ROWS);
    let json = '';
    for (let offset = 0; ;) {
      const part = await call(client, 'task_result', { taskId, offset, part: 'structured' });
      const text = textsOf(part)[0] ?? '';
      json += text.slice(text.indexOf('\n') + 1);
      const next = /"offset": (\d+)/.exec(text.slice(0, text.indexOf('\n')))?.[1];
      if (next === undefined) break;
      offset = Number(next);
    }
    assert.deepEqual(JSON.parse(json), ROWS);
  });
});

async function lastTaskId(server: ProfileServer): Promise<string> {
  const page = await server.app.store.list({ limit: 1 });
  const id = page.tasks[0]?.id;
  assert.ok(id !== undefined, 'a task');
  return id;
}

describe('notifications/resources/list_changed when a task resource appears', () => {
  let server: ProfileServer;
  let alice: Client;
  let bob: Client;
  const heard = { alice: 0, bob: 0 };

  before(async () => {
    server = await startProfileServer({ auth: { tokens: { 'tok-a': 'alice', 'tok-b': 'bob' } } });
    alice = await hostClient(server.url, 'gemini-cli-mcp-client', '2025-11-25', 'tok-a');
    bob = await hostClient(server.url, 'gemini-cli-mcp-client', '2025-11-25', 'tok-b');
    alice.setNotificationHandler(LIST_CHANGED, () => void (heard.alice += 1));
    bob.setNotificationHandler(LIST_CHANGED, () => void (heard.bob += 1));
  });
  after(async () => {
    await alice.close();
    await bob.close();
    await server.close();
  });

  it("reaches the owner's session, which then finds it listed; nobody else", async () => {
    assert.deepEqual((await alice.listResources()).resources, []);
    const uri = linkOf(await call(alice, 'report', { chars: 80_000 }));
    await waitFor('alice to hear list_changed', () => heard.alice > 0);
    const listed = (await alice.listResources()).resources.map((r) => r.uri);
    assert.ok(listed.includes(uri), JSON.stringify(listed));
    // Bob's own resource proves his stream works: he hears that one, and only that one.
    const bobs = linkOf(await call(bob, 'report', { chars: 80_000 }));
    await waitFor('bob to hear of his own', () => heard.bob > 0);
    assert.equal(heard.bob, 1, 'bob heard nothing of alice’s');
    assert.ok((await bob.listResources()).resources.every((r) => r.uri !== uri));
    assert.ok(bobs !== uri);
  });

  it('is coalesced: a burst of appearances is a few notices, not one each', async () => {
    const before = heard.alice;
    await Promise.all(Array.from({ length: 8 }, () => call(alice, 'report', { chars: 50_000 })));
    await waitFor('the notices after the burst', () => heard.alice > before);
    const listed = (await alice.listResources()).resources.length;
    assert.ok(listed >= 9, `listed ${listed}`);
    assert.ok(heard.alice - before < 8, `heard ${heard.alice - before} for 8 resources`);
  });
});
