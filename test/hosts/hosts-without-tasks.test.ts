import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '../helpers/wait.js';
import { rpc, TASKS_CAPS, type RawReply } from '../server/support.js';
import { startInlineServer, type InlineServer } from './inline-fixture.js';

type Block = { type: string; text?: string };
type Result = Record<string, unknown> & {
  content?: Block[];
  structuredContent?: Record<string, unknown>;
};

const NO_TASKS = {};
const ELICIT = { elicitation: {} };

function resultOf(reply: RawReply): Result {
  assert.ok(reply.body.result, `no result: ${JSON.stringify(reply.body)}`);
  return reply.body.result as Result;
}

function texts(result: Result): string[] {
  return (result.content ?? []).flatMap((block) =>
    block.type === 'text' ? [block.text ?? ''] : [],
  );
}

/** Every JSON-RPC message of a reply, JSON or SSE (notifications included). */
async function rawMessages(url: string, params: Record<string, unknown>, caps: object) {
  const body = {
    jsonrpc: '2.0',
    id: 77,
    method: 'tools/call',
    params: {
      ...params,
      _meta: {
        ...(params['_meta'] as object),
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'inline', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': caps,
      },
    },
  };
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': String(params['name']),
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!text.startsWith('event:') && !text.startsWith('data:'))
    return [JSON.parse(text)] as Result[];
  return text
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => JSON.parse(line.slice(5)) as Result);
}

async function tasksOf(server: InlineServer, tool: string) {
  const page = await server.store.list({ limit: 100 });
  return page.tasks.filter((task) => task.tool === tool);
}

describe('hosts without tasks: results every host can read (Build 1)', () => {
  let server: InlineServer;
  before(async () => {
    server = await startInlineServer({ fallbackTools: false, inlineWaitMs: 2000 });
  });
  after(() => server.close());

  it('an inline result with structuredContent carries its JSON in a text block too', async () => {
    const result = resultOf(
      await rpc(
        server.url,
        'tools/call',
        { name: 'structured', arguments: {} },
        { caps: NO_TASKS },
      ),
    );
    assert.deepEqual(texts(result), [
      'Report: all good',
      JSON.stringify({ topic: 'health', verdict: 'good' }),
    ]);
    assert.deepEqual(result.structuredContent, { topic: 'health', verdict: 'good' });
  });

  it('so does the result of a task read with tasks/get', async () => {
    const created = resultOf(
      await rpc(
        server.url,
        'tools/call',
        { name: 'structured', arguments: {} },
        { caps: TASKS_CAPS },
      ),
    );
    const taskId = String(created['taskId']);
    const done = await waitFor('the task to complete', async () => {
      const got = resultOf(await rpc(server.url, 'tasks/get', { taskId }));
      return got['status'] === 'completed' ? (got['result'] as Result) : undefined;
    });
    assert.ok(texts(done).includes(JSON.stringify({ topic: 'health', verdict: 'good' })));
  });
});

describe('hosts without tasks: inline wait, then a handle (Build 2)', () => {
  let plain: InlineServer;
  let fallback: InlineServer;
  before(async () => {
    plain = await startInlineServer({ fallbackTools: false, inlineWaitMs: 200 });
    fallback = await startInlineServer({ fallbackTools: true, inlineWaitMs: 200 });
  });
  after(async () => {
    await plain.close();
    await fallback.close();
  });

  it('runs the call as a durable task behind the scenes and answers inline within the wait', async () => {
    const before = plain.runs.get('structured') ?? 0;
    const result = resultOf(
      await rpc(plain.url, 'tools/call', { name: 'structured', arguments: {} }, { caps: NO_TASKS }),
    );
    assert.equal(texts(result)[0], 'Report: all good');
    assert.equal((plain.runs.get('structured') ?? 0) - before, 1, 'ran exactly once');
    const stored = await tasksOf(plain, 'structured');
    assert.ok(
      stored.some((task) => task.status === 'completed'),
      'a durable task was written',
    );
  });

  it('past the wait, with fallback tools: a handle in text and structuredContent', async () => {
    const result = resultOf(
      await rpc(
        fallback.url,
        'tools/call',
        { name: 'gated', arguments: { gate: 'h1' } },
        { caps: NO_TASKS },
      ),
    );
    const handle = result.structuredContent ?? {};
    const taskId = String(handle['taskId']);
    assert.equal(handle['status'], 'working');
    assert.equal(handle['next'], 'task_result');
    assert.deepEqual(handle['arguments'], { taskId });
    assert.equal(typeof handle['pollAfterMs'], 'number');
    assert.match(texts(result)[0] ?? '', new RegExp(`task_result with \\{"taskId":"${taskId}"\\}`));
    assert.ok(texts(result).includes(JSON.stringify(handle)), 'the JSON is in a text block too');

    // task_result waits up to the inline wait, then hands back a fresh handle.
    const still = resultOf(
      await rpc(
        fallback.url,
        'tools/call',
        { name: 'task_result', arguments: { taskId } },
        { caps: NO_TASKS },
      ),
    );
    assert.equal(still.structuredContent?.['next'], 'task_result');
    assert.equal(still.structuredContent?.['taskId'], taskId);

    fallback.gates.open('h1:1');
    fallback.gates.open('h1');
    const done = await waitFor('task_result to bring the result', async () => {
      const reply = resultOf(
        await rpc(
          fallback.url,
          'tools/call',
          { name: 'task_result', arguments: { taskId } },
          { caps: NO_TASKS },
        ),
      );
      return reply.structuredContent?.['next'] === undefined ? reply : undefined;
    });
    assert.deepEqual(texts(done), ['gate h1 passed']);
    assert.equal(fallback.runs.get('gated'), 1, 'the tool ran once for the whole exchange');
  });

  it('past the wait, without fallback tools: keeps waiting and answers inline', async () => {
    const pending = rpc(
      plain.url,
      'tools/call',
      { name: 'gated', arguments: { gate: 'p1' } },
      { caps: NO_TASKS },
    );
    const [task] = await waitFor('the task behind the call', async () => {
      const found = await tasksOf(plain, 'gated');
      return found.length > 0 ? found : undefined;
    });
    assert.ok(task);
    // Let more than one inline wait (200 ms) pass before the tool may finish.
    await waitFor('two inline waits to pass', async () =>
      Date.now() - task.createdAt > 500 ? true : undefined,
    );
    plain.gates.open('p1:1');
    plain.gates.open('p1');
    const result = resultOf(await pending);
    assert.deepEqual(texts(result), ['gate p1 passed']);
    assert.equal(result.structuredContent, undefined, 'no handle');
  });

  it('sends progress notifications to an inline caller that sent a progressToken', async () => {
    const reply = rawMessages(
      plain.url,
      { name: 'gated', arguments: { gate: 'g1' }, _meta: { progressToken: 'tok-9' } },
      NO_TASKS,
    );
    const [task] = await waitFor('the task', async () => {
      const found = (await tasksOf(plain, 'gated')).filter((t) => t.arguments['gate'] === 'g1');
      return found.length > 0 ? found : undefined;
    });
    assert.ok(task);
    await waitFor('step one to be written', async () =>
      (await plain.store.get(task.id))?.statusMessage === 'step one' ? true : undefined,
    );
    plain.gates.open('g1:1');
    await waitFor('step two to be written', async () =>
      (await plain.store.get(task.id))?.statusMessage === 'step two' ? true : undefined,
    );
    plain.gates.open('g1');
    const messages = await reply;
    const progress = messages
      .filter((m) => m['method'] === 'notifications/progress')
      .map((m) => m['params'] as Record<string, unknown>);
    assert.ok(progress.length >= 1, JSON.stringify(messages));
    assert.ok(progress.every((p) => p['progressToken'] === 'tok-9'));
    assert.ok(
      progress.some((p) => p['message'] === 'step two'),
      JSON.stringify(progress),
    );
    const last = messages.at(-1)?.['result'] as Result;
    assert.deepEqual(texts(last), ['gate g1 passed']);
  });

  it('asks a question over the request when the host can elicit, and resumes the task', async () => {
    const first = resultOf(
      await rpc(plain.url, 'tools/call', { name: 'asks', arguments: {} }, { caps: ELICIT }),
    );
    assert.equal(first['resultType'], 'input_required');
    const requests = first['inputRequests'] as Record<string, { method: string }>;
    const [key] = Object.keys(requests);
    assert.ok(key);
    assert.equal(requests[key]?.method, 'elicitation/create');
    const taskId = key.split('/')[0] ?? '';
    assert.equal((await plain.store.get(taskId))?.status, 'input_required');
    const answered = resultOf(
      await rpc(
        plain.url,
        'tools/call',
        {
          name: 'asks',
          arguments: {},
          inputResponses: { [key]: { action: 'accept', content: { ok: true } } },
        },
        { caps: ELICIT },
      ),
    );
    assert.deepEqual(texts(answered), ['answer: accept']);
    assert.equal((await plain.store.get(taskId))?.status, 'completed');
    assert.equal((await tasksOf(plain, 'asks')).length, 1, 'the retry resumed the same task');
  });

  it('a host that cannot elicit gets a handle saying the task needs input; task_status shows it, task_answer answers it', async () => {
    const result = resultOf(
      await rpc(fallback.url, 'tools/call', { name: 'asks', arguments: {} }, { caps: NO_TASKS }),
    );
    const handle = result.structuredContent ?? {};
    assert.equal(handle['status'], 'input_required');
    assert.equal(handle['next'], 'task_answer');
    assert.deepEqual(handle['questions'], ['Delete notes.txt?']);
    const [ask] = handle['asks'] as { key: string; requestedSchema: unknown }[];
    assert.deepEqual((ask?.requestedSchema as { required?: unknown }).required, ['ok']);
    const answer = (content: Record<string, unknown>) =>
      rpc(
        fallback.url,
        'tools/call',
        { name: 'task_answer', arguments: { taskId: handle['taskId'], key: ask?.key, content } },
        { caps: NO_TASKS },
      );
    const refused = resultOf(await answer({ ok: 'maybe' }));
    assert.equal(refused.isError, true, 'an answer that does not fit the schema');
    assert.match(texts(refused)[0] ?? '', /not taken.*Answer again/);
    const status = resultOf(
      await rpc(
        fallback.url,
        'tools/call',
        { name: 'task_status', arguments: { taskId: handle['taskId'] } },
        { caps: NO_TASKS },
      ),
    );
    assert.match(texts(status)[0] ?? '', /Delete notes\.txt\?/);
    const answered = resultOf(await answer({ ok: true }));
    assert.deepEqual(texts(answered), ['answer: accept'], JSON.stringify(answered));
  });
});

describe('honest status text (Build 3)', () => {
  let server: InlineServer;
  before(async () => {
    server = await startInlineServer({ fallbackTools: false, inlineWaitMs: 2000 });
  });
  after(() => server.close());

  it('clears the last progress line when the task completes', async () => {
    const created = resultOf(
      await rpc(server.url, 'tools/call', { name: 'gated', arguments: { gate: 's1' } }),
    );
    const taskId = String(created['taskId']);
    server.gates.open('s1:1');
    await waitFor('step two', async () =>
      (await server.store.get(taskId))?.statusMessage === 'step two' ? true : undefined,
    );
    server.gates.open('s1');
    const done = await waitFor('completion', async () => {
      const got = resultOf(await rpc(server.url, 'tasks/get', { taskId }));
      return got['status'] === 'completed' ? got : undefined;
    });
    assert.equal(done['statusMessage'], undefined);
  });

  it('clears an answered question, whatever comes next', async () => {
    const created = resultOf(await rpc(server.url, 'tools/call', { name: 'asks', arguments: {} }));
    const taskId = String(created['taskId']);
    const asking = await waitFor('the question', async () => {
      const got = resultOf(await rpc(server.url, 'tasks/get', { taskId }));
      return got['status'] === 'input_required' ? got : undefined;
    });
    assert.equal(asking['statusMessage'], 'Delete notes.txt?');
    const inputResponses = { confirm: { action: 'decline' } };
    await rpc(server.url, 'tasks/update', { taskId, inputResponses });
    const done = await waitFor('completion', async () => {
      const got = resultOf(await rpc(server.url, 'tasks/get', { taskId }));
      return got['status'] === 'completed' ? got : undefined;
    });
    assert.equal(done['statusMessage'], undefined);
    assert.match(JSON.stringify(done['result']), /answer: decline/);
  });

  it('a task cancelled while asking says it was cancelled, not the question', async () => {
    const created = resultOf(await rpc(server.url, 'tools/call', { name: 'asks', arguments: {} }));
    const taskId = String(created['taskId']);
    await waitFor('the question', async () => {
      const got = resultOf(await rpc(server.url, 'tasks/get', { taskId }));
      return got['status'] === 'input_required' ? got : undefined;
    });
    await rpc(server.url, 'tasks/cancel', { taskId });
    const got = resultOf(await rpc(server.url, 'tasks/get', { taskId }));
    assert.equal(got['status'], 'cancelled');
    assert.equal(got['statusMessage'], 'Cancelled by request.');
  });
});
