import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  createTask,
  getTask,
  post,
  rpc,
  startDemo,
  waitForStatus,
  type Running,
} from './support.js';

/** A small seeded PRNG so a failing case can be replayed. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {
    extensions: { 'io.modelcontextprotocol/tasks': {} },
  },
};
const METHODS = [
  'tasks/get',
  'tasks/update',
  'tasks/cancel',
  'tasks/result',
  'tasks/list',
  'tools/call',
  'tools/list',
  'server/discover',
  'initialize',
  'ping',
  'nope/nope',
  '',
  'prompts/get',
  'resources/read',
  'subscriptions/listen',
];
const VALUES: unknown[] = [
  null,
  0,
  -1,
  1e308,
  'x',
  '',
  true,
  [],
  {},
  [1, [2]],
  { a: { b: null } },
  'é\u0000\uffff',
  Number.MAX_SAFE_INTEGER,
];

function pick<T>(rand: () => number, items: readonly T[]): T {
  return items[Math.floor(rand() * items.length)] as T;
}

function nested(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

/** One hostile request: a body string and headers. */
function generate(rand: () => number): { body: string; headers: Record<string, string> } {
  const method = pick(rand, METHODS);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  if (rand() < 0.7)
    headers['mcp-protocol-version'] = pick(rand, [
      '2026-07-28',
      '2025-11-25',
      'v999',
      '',
      '=?base64?!!?=',
    ]);
  if (rand() < 0.7) headers['mcp-method'] = rand() < 0.6 ? method : pick(rand, METHODS) || 'x';
  if (rand() < 0.5) headers['mcp-name'] = pick(rand, ['gate-test', 'x', '=?base64?eA==?=', ' ']);
  const params: Record<string, unknown> = {};
  if (rand() < 0.8) params['_meta'] = rand() < 0.7 ? META : pick(rand, VALUES);
  if (rand() < 0.8) params['taskId'] = pick(rand, [...VALUES, 'gate-test', 'A'.repeat(24)]);
  if (rand() < 0.5) params['inputResponses'] = pick(rand, VALUES);
  if (rand() < 0.5)
    params['name'] = pick(rand, ['greet', 'slow_compute', 'failing_job', 'missing', 7]);
  if (rand() < 0.4) params['arguments'] = pick(rand, VALUES);
  const message: Record<string, unknown> = {
    jsonrpc: rand() < 0.9 ? '2.0' : pick(rand, VALUES),
    method: rand() < 0.9 ? method : pick(rand, VALUES),
  };
  if (rand() < 0.85) message['id'] = pick(rand, [1, 'id', null, {}, 1.5, -0]);
  if (rand() < 0.9) message['params'] = rand() < 0.9 ? params : pick(rand, VALUES);
  let body = JSON.stringify(message);
  const mutation = rand();
  if (mutation < 0.1) body = body.slice(0, Math.floor(rand() * body.length));
  else if (mutation < 0.15) body = nested(50 + Math.floor(rand() * 5000));
  else if (mutation < 0.2) body = JSON.stringify(pick(rand, VALUES));
  else if (mutation < 0.25) body = `[${body},${body}]`;
  else if (mutation < 0.3)
    body = Buffer.from(Array.from({ length: 64 }, () => Math.floor(rand() * 256))).toString(
      'latin1',
    );
  else if (mutation < 0.33) body = '';
  return { body, headers };
}

describe('fuzz barrage', () => {
  let server: Running;
  before(async () => {
    server = await startDemo();
  });
  after(() => server.close());

  it('1200 generated bad requests get 4xx or JSON-RPC answers, never a 5xx, hang or crash', async () => {
    const rand = prng(20261129);
    const cases = Array.from({ length: 1200 }, () => generate(rand));
    for (let i = 0; i < cases.length; i += 24) {
      const batch = cases.slice(i, i + 24);
      const replies = await Promise.all(
        batch.map(async (c) => {
          const signal = AbortSignal.timeout(15_000);
          const res = await fetch(server.url, {
            method: 'POST',
            headers: c.headers,
            body: c.body,
            signal,
          });
          const text = await res.text();
          return { status: res.status, text, body: c.body.slice(0, 200), headers: c.headers };
        }),
      );
      for (const reply of replies) {
        assert.ok(
          reply.status < 500,
          `HTTP ${reply.status} for ${JSON.stringify(reply.headers)} ${reply.body}: ${reply.text.slice(0, 200)}`,
        );
      }
    }
    const ok = await rpc(server.url, 'tools/call', {
      name: 'greet',
      arguments: { name: 'still here' },
    });
    assert.equal(
      (ok.body.result?.['content'] as { text: string }[])[0]?.text,
      'Hello, still here!',
    );
    const raw = await post(server.url, '{"jsonrpc":"2.0","id":1,', {
      'content-type': 'application/json',
    });
    assert.equal(raw.body.error?.code, -32700);
  });

  it('the web-standard fetch face gives the barrage the statuses of the Node face', async () => {
    const rand = prng(20260728);
    const cases = Array.from({ length: 300 }, () => generate(rand));
    for (const c of cases) {
      const init = { method: 'POST', headers: c.headers, body: c.body };
      const node = await fetch(server.url, init);
      const web = await server.app.fetch(new Request(server.url, init));
      await Promise.all([node.text(), web.text()]);
      assert.equal(web.status, node.status, `${JSON.stringify(c.headers)} ${c.body.slice(0, 200)}`);
    }
  });

  it('malformed answers to a waiting question are refused with -32602 naming the key: 0 accepted', async () => {
    const taskId = await createTask(server.url, 'confirm_delete', { filename: 'a.txt' });
    await waitForStatus(server.url, taskId, ['input_required']);
    const bad: unknown[] = [
      {},
      { action: 'bogus' },
      { action: 42 },
      { action: 'ACCEPT' },
      { action: 'accept' },
      { action: 'accept', content: 'yes' },
      { action: 'accept', content: {} },
      { action: 'accept', content: { confirm: 'yes' } },
      { action: 'accept', content: { confirm: null } },
      { action: 'accept', content: [true] },
      { content: { confirm: true } },
    ];
    let accepted = 0;
    for (const answer of bad) {
      const reply = await rpc(server.url, 'tasks/update', {
        taskId,
        inputResponses: { confirm: answer },
      });
      assert.ok(reply.status < 500, `HTTP ${reply.status} for ${JSON.stringify(answer)}`);
      if (reply.body.error === undefined) accepted += 1;
      else {
        assert.equal(reply.body.error.code, -32602, JSON.stringify(answer));
        assert.match(reply.body.error.message, /confirm/, 'names the key');
      }
      const task = await getTask(server.url, taskId);
      assert.equal(
        task['status'],
        'input_required',
        `still waiting after ${JSON.stringify(answer)}`,
      );
    }
    assert.equal(accepted, 0, 'no malformed answer accepted');
    const good = await rpc(server.url, 'tasks/update', {
      taskId,
      inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
    });
    assert.equal(good.body.error, undefined);
    const done = await waitForStatus(server.url, taskId, ['completed']);
    assert.equal(done['status'], 'completed');
  });
});
