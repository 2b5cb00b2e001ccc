import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  createHttpDispatch,
  encodeHeaderValue,
  PROTOCOL_VERSION,
  SchemaChecker,
} from '../../src/client/index.js';
import { parseTaskState, parseToolCallReply } from '../../src/client/wire.js';

const framing = {
  protocolVersion: PROTOCOL_VERSION,
  clientInfo: { name: 't', version: '1' },
  clientCapabilities: {},
};

function fakeFetch(respond: (body: { id: string }, headers: Headers) => Response): {
  fetch: typeof fetch;
  headers: Headers[];
} {
  const headers: Headers[] = [];
  const fn = (async (_url: unknown, init?: RequestInit) => {
    const h = new Headers(init?.headers);
    headers.push(h);
    return respond(JSON.parse(String(init?.body)) as { id: string }, h);
  }) as typeof fetch;
  return { fetch: fn, headers };
}

describe('client wire glue', () => {
  it('reads a JSON-RPC response from an SSE stream, skipping notifications and keep-alives', async () => {
    const f = fakeFetch((body) => {
      const sse = `: keep-alive\n\nevent: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n\ndata: {"jsonrpc":"2.0","id":"${body.id}","result":{"resultType":"complete","content":[]}}\n\n`;
      return new Response(sse, { headers: { 'content-type': 'text/event-stream' } });
    });
    const reply = await createHttpDispatch({
      url: 'http://127.0.0.1:1/mcp',
      framing,
      fetch: f.fetch,
    })({ method: 'tools/list', params: {} });
    assert.deepEqual(reply, { kind: 'result', result: { resultType: 'complete', content: [] } });
  });

  it('merges headers case-insensitively and sets Mcp-Method / Mcp-Name once', async () => {
    const f = fakeFetch((body) =>
      Response.json({ jsonrpc: '2.0', id: body.id, result: { resultType: 'complete' } }),
    );
    const dispatch = createHttpDispatch({
      url: 'http://127.0.0.1:1/mcp',
      framing,
      fetch: f.fetch,
      bearer: 'tok',
    });
    await dispatch(
      { method: 'tasks/get', params: { taskId: 'abc' } },
      { context: { headers: { 'Mcp-Name': 'abc' } } },
    );
    const h = f.headers[0]!;
    assert.equal(h.get('mcp-name'), 'abc');
    assert.equal(h.get('mcp-method'), 'tasks/get');
    assert.equal(h.get('mcp-protocol-version'), PROTOCOL_VERSION);
    assert.equal(h.get('authorization'), 'Bearer tok');
    assert.equal(encodeHeaderValue('café'), `=?base64?${Buffer.from('café').toString('base64')}?=`);
  });

  it('treats -32003 as -32021', async () => {
    const f = fakeFetch((body) =>
      Response.json(
        { jsonrpc: '2.0', id: body.id, error: { code: -32003, message: 'missing' } },
        { status: 400 },
      ),
    );
    const reply = await createHttpDispatch({
      url: 'http://127.0.0.1:1/mcp',
      framing,
      fetch: f.fetch,
    })({ method: 'tools/call', params: { name: 'x' } });
    assert.deepEqual(reply, { kind: 'error', error: { code: -32021, message: 'missing' } });
  });

  it('a completed task without a nested resultType counts as complete', () => {
    const task = parseTaskState({
      resultType: 'complete',
      taskId: 't',
      status: 'completed',
      createdAt: '2026-01-01T00:00:00.000Z',
      lastUpdatedAt: '2026-01-01T00:00:00.000Z',
      ttlMs: null,
      result: { content: [{ type: 'text', text: 'hi' }] },
    });
    assert.equal(task.status, 'completed');
  });

  it('a missing resultType on tools/call is a plain result; an unknown one is refused', () => {
    assert.equal(parseToolCallReply({ content: [] }).kind, 'complete');
    assert.throws(() => parseToolCallReply({ resultType: 'mystery' }), /unsupported resultType/);
  });

  it('checks JSON Schema 2020-12 and skips schemas it cannot compile', () => {
    const checker = new SchemaChecker();
    const schema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { n: { type: 'integer' } },
      required: ['n'],
    };
    assert.deepEqual(checker.check(schema, { n: 1 }), []);
    assert.equal(checker.check(schema, { n: 'x' }).length, 1);
    assert.deepEqual(checker.check({ $ref: 'https://example.com/remote.json' }, 1), []);
  });
});
