/**
 * Host profiles (issue 38): known hosts, recognised by `clientInfo.name`, get an inline wait
 * under their tool time-out, results under their cut-off, a handle they read once, and (Copilot
 * CLI --experimental) `execution.taskSupport` hints; unknown hosts keep the safe defaults.
 * Each host is played by the official SDK client under that host's name, over real HTTP.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { createTask, rpc, TASKS_CAPS } from '../server/support.js';
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
import { rawInitialize } from '../helpers/raw-session.js';

const CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';
const ROWS_JSON = JSON.stringify(ROWS);

async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  return (await client.callTool({ name, arguments: args })) as ToolResult;
}

/** What Copilot CLI counts of a result: every text block and the JSON of structuredContent. */
function shownBytes(result: ToolResult): number {
  const texts = textsOf(result).reduce((n, text) => n + Buffer.byteLength(text), 0);
  const structured = result.structuredContent;
  return texts + (structured === undefined ? 0 : Buffer.byteLength(JSON.stringify(structured)));
}

/** The handle's wait, as it tells the model: "wait up to Ns". */
function waitSecondsOf(handle: ToolResult): number {
  const said = /wait up to (\d+)s/.exec(textsOf(handle)[0] ?? '')?.[1];
  assert.ok(said !== undefined, JSON.stringify(handle));
  return Number(said);
}

describe('host profiles', () => {
  let server: ProfileServer;
  const clients: Client[] = [];
  let slowTask: string;
  const connect = async (name: string, wire: '2025-11-25' | '2026-07-28') => {
    const client = await hostClient(server.url, name, wire);
    clients.push(client);
    return client;
  };

  before(async () => {
    server = await startProfileServer();
    // A task still running, made by a host with tasks (anonymous: every 2026 caller's).
    slowTask = await createTask(server.url, 'slow', { gate: 'never' });
  });
  after(async () => {
    server.gates.open('never');
    for (const client of clients) await client.close();
    await server.close();
  });

  it('an unknown host keeps the defaults: JSON copy, instruction in both, 45 s', async () => {
    const host = await connect('some-host', '2026-07-28');
    const rows = await call(host, 'rows');
    assert.ok(textsOf(rows).includes(ROWS_JSON), 'the JSON copy as text');
    const handle = await call(host, 'task_status', { taskId: slowTask });
    assert.equal(typeof handle.structuredContent?.['message'], 'string');
    assert.equal(waitSecondsOf(handle), 45);
    const big = await call(host, 'report', { chars: 100_000 });
    const handedOut = textsOf(big).join('').length;
    assert.ok(handedOut > 30_000 && handedOut <= 40_000, `${handedOut}`);
  });

  it('Codex CLI: results under ~12,000 characters, 240 s wait, structuredContent whole', async () => {
    const codex = await connect('codex-mcp-client', '2025-11-25');
    const whole = numbered(30_000);
    const big = await call(codex, 'report', { chars: 30_000 });
    const shown = JSON.stringify(big.content ?? []).length;
    assert.ok(shown <= 10_500, `handed out ${shown} characters`);
    const [notice] = textsOf(big);
    assert.match(notice ?? '', /shortened: it has 30000 characters/);
    const uri = linkOf(big);
    const read = await codex.readResource({ uri });
    assert.equal((read.contents[0] as { text: string }).text, whole, 'the rest is readable');
    const handle = await call(codex, 'task_status', { taskId: slowTask });
    assert.equal(waitSecondsOf(handle), 240);
    assert.equal(typeof handle.structuredContent?.['message'], 'string', 'it shows only that');
  });

  it('Gemini CLI: no second copy of the handle or of structuredContent, 480 s wait', async () => {
    const gemini = await connect('gemini-cli-mcp-client', '2025-11-25');
    const rows = await call(gemini, 'rows');
    assert.deepEqual(textsOf(rows), ['Here are the rows.'], 'no JSON copy: it shows both');
    assert.deepEqual(rows.structuredContent, ROWS);
    const handle = await call(gemini, 'task_status', { taskId: slowTask });
    assert.equal(waitSecondsOf(handle), 480);
    assert.equal(handle.structuredContent?.['message'], undefined, 'the instruction once');
    assert.equal(handle.structuredContent?.['taskId'], slowTask);
    assert.equal(handle.structuredContent?.['next'], 'task_result');
  });

  it('Copilot CLI: every block together under 20,480 bytes, 150 s wait', async () => {
    const copilot = await connect('copilot-cli', '2026-07-28');
    const wide = await call(copilot, 'report', { chars: 15_000, unit: 'é' });
    assert.ok(shownBytes(wide) <= 20_480, `${shownBytes(wide)} bytes`);
    assert.match(textsOf(wide)[0] ?? '', /shortened: it has 15000 characters/);
    const taskId = linkOf(wide).split('/')[3];
    const part = await call(copilot, 'task_result', { taskId, offset: 0 });
    assert.ok(shownBytes(part) <= 20_480, `a part: ${shownBytes(part)} bytes`);
    const rows = await call(copilot, 'rows');
    assert.ok(shownBytes(rows) <= 20_480, `rows: ${shownBytes(rows)} bytes`);
    assert.ok(!textsOf(rows).includes(ROWS_JSON), 'no JSON copy');
    const handle = await call(copilot, 'task_status', { taskId: slowTask });
    assert.equal(waitSecondsOf(handle), 150);
    assert.equal(handle.structuredContent?.['message'], undefined);
  });

  it('Copilot CLI --experimental: taskSupport listed, optional tools answered inline', async () => {
    const options = {
      caps: TASKS_CAPS,
      meta: { [CLIENT_INFO]: { name: 'copilot-cli', version: '1.0.102' } },
    };
    const listed = await rpc(server.url, 'tools/list', {}, options);
    const tools = listed.body.result?.['tools'] as { name: string; execution?: unknown }[];
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    assert.deepEqual(byName.get('needs_task')?.execution, { taskSupport: 'required' });
    assert.deepEqual(byName.get('report')?.execution, { taskSupport: 'optional' });
    assert.ok(byName.has('task_result'), 'the fallback tools, for its handles');
    const optional = await rpc(server.url, 'tools/call', { name: 'rows', arguments: {} }, options);
    const result = optional.body.result ?? {};
    assert.equal(result['taskId'], undefined, JSON.stringify(result));
    assert.ok(Array.isArray(result['content']), 'a CallToolResult');
    const required = await createTask(server.url, 'needs_task', {}, options);
    assert.equal(typeof required, 'string', 'a required tool runs as a task');
  });

  it('Claude Code with tasks sees no fallback tools; without tasks it does', async () => {
    const names = async (caps: Record<string, unknown>) => {
      const meta = { [CLIENT_INFO]: { name: 'claude-code', version: '2.1.328' } };
      const reply = await rpc(server.url, 'tools/list', {}, { caps, meta });
      return (reply.body.result?.['tools'] as { name: string }[]).map((tool) => tool.name);
    };
    assert.ok(!(await names(TASKS_CAPS)).includes('task_result'));
    assert.ok((await names({})).includes('task_result'));
    const listed = await rpc(server.url, 'tools/list', {}, { caps: TASKS_CAPS });
    const tools = listed.body.result?.['tools'] as { execution?: unknown }[];
    assert.ok(
      tools.every((tool) => tool.execution === undefined),
      'no hints to others',
    );
  });
});

describe('a configured --inline-wait under a host profile', () => {
  let server: ProfileServer;
  let clients: Client[] = [];

  before(async () => {
    server = await startProfileServer({ inlineWaitMs: 400_000 });
  });
  after(async () => {
    server.gates.open('never');
    for (const client of clients) await client.close();
    clients = [];
    await server.close();
  });

  it("stays below the host's time-out, and applies as given to unknown hosts", async () => {
    const taskId = await createTask(server.url, 'slow', { gate: 'never' });
    const copilot = await hostClient(server.url, 'copilot-cli', '2026-07-28');
    const other = await hostClient(server.url, 'some-host', '2026-07-28');
    clients = [copilot, other];
    assert.equal(waitSecondsOf(await call(copilot, 'task_status', { taskId })), 170);
    assert.equal(waitSecondsOf(await call(other, 'task_status', { taskId })), 400);
  });
});

describe('initialize with an older protocol version (Codex, Gemini CLI: 2025-06-18)', () => {
  let server: ProfileServer;
  before(async () => {
    server = await startProfileServer();
  });
  after(() => server.close());

  async function initialize(protocolVersion: string): Promise<Record<string, unknown>> {
    const { text } = await rawInitialize(server.url, {
      protocolVersion,
      clientInfo: { name: 'codex-mcp-client', version: '0.171.0' },
    });
    const json = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? '{}');
    const result = (JSON.parse(json) as { result?: Record<string, unknown> }).result ?? {};
    assert.equal(result['protocolVersion'], protocolVersion, text);
    return result['capabilities'] as Record<string, unknown>;
  }

  it('answers 2025-06-18 without capabilities.tasks and extensions', async () => {
    const caps = await initialize('2025-06-18');
    assert.equal(caps['tasks'], undefined, JSON.stringify(caps));
    assert.equal(caps['extensions'], undefined, JSON.stringify(caps));
    assert.deepEqual(caps['resources'], { subscribe: true, listChanged: true });
  });

  it('still answers 2025-11-25 with capabilities.tasks', async () => {
    const caps = await initialize('2025-11-25');
    assert.ok(caps['tasks'], JSON.stringify(caps));
  });
});
