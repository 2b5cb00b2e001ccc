import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { StdioChild } from './stdio-child.js';
import { rpc, startDemo, TASKS_CAPS, type Running } from './support.js';

interface BadInput {
  name: string;
  method: string;
  params: Record<string, unknown>;
  caps?: Record<string, unknown>;
  /** HTTP headers that repeat the body (HTTP checks they agree before anything else). */
  headers?: Record<string, string>;
  meta?: Record<string, unknown>;
  /** The JSON-RPC error code both transports must answer with. */
  code: number;
}

const UNKNOWN_ID = 'AAAAAAAAAAAAAAAAAAAAAA';

const BAD_INPUTS: BadInput[] = [
  { name: 'taskId a number', method: 'tasks/get', params: { taskId: 42 }, code: -32602 },
  { name: 'taskId missing', method: 'tasks/cancel', params: {}, code: -32602 },
  { name: 'implausible taskId', method: 'tasks/get', params: { taskId: '../x' }, code: -32602 },
  { name: 'unknown taskId', method: 'tasks/cancel', params: { taskId: UNKNOWN_ID }, code: -32602 },
  {
    name: 'inputResponses a string',
    method: 'tasks/update',
    params: { taskId: UNKNOWN_ID, inputResponses: 'yes' },
    code: -32602,
  },
  {
    name: 'inputResponses an array',
    method: 'tasks/update',
    params: { taskId: UNKNOWN_ID, inputResponses: [] },
    code: -32602,
  },
  {
    name: 'inputResponses missing',
    method: 'tasks/update',
    params: { taskId: UNKNOWN_ID },
    code: -32602,
  },
  {
    name: 'no tasks extension declared',
    method: 'tasks/get',
    params: { taskId: UNKNOWN_ID },
    caps: {},
    code: -32021,
  },
  {
    name: 'removed tasks/result',
    method: 'tasks/result',
    params: { taskId: UNKNOWN_ID },
    code: -32601,
  },
  { name: 'removed tasks/list', method: 'tasks/list', params: {}, code: -32601 },
  {
    name: 'unsupported protocol version',
    method: 'tasks/get',
    params: { taskId: UNKNOWN_ID },
    meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01' },
    headers: { 'mcp-protocol-version': '2099-01-01' },
    code: -32022,
  },
  {
    name: 'client capabilities not an object',
    method: 'tasks/get',
    params: { taskId: UNKNOWN_ID },
    meta: { 'io.modelcontextprotocol/clientCapabilities': 'all' },
    code: -32602,
  },
];

describe('tasks/* answers the same bad input alike over HTTP and stdio', () => {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-both-'));
  let http: Running;
  let stdio: StdioChild;

  before(async () => {
    http = await startDemo();
    stdio = new StdioChild(`sqlite:${join(dir, 'tasks.db')}`);
  });

  after(async () => {
    await stdio.close();
    await http.close();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const input of BAD_INPUTS) {
    it(`${input.name}: ${input.code}`, async () => {
      const caps = input.caps ?? TASKS_CAPS;
      const meta = input.meta ?? {};
      const headers = input.headers ?? {};
      const overHttp = await rpc(http.url, input.method, input.params, { caps, meta, headers });
      const overStdio = await stdio.request(input.method, input.params, caps, meta);
      assert.equal(overHttp.body.error?.code, input.code, JSON.stringify(overHttp.body));
      assert.deepEqual(overStdio.error, overHttp.body.error);
      assert.equal(overStdio.result, undefined);
    });
  }

  it('a good request gets the same shape of answer on both', async () => {
    const created = await stdio.request(
      'tools/call',
      { name: 'failing_job', arguments: {} },
      TASKS_CAPS,
    );
    const taskId = created.result?.['taskId'] as string;
    const got = await stdio.request('tasks/get', { taskId }, TASKS_CAPS);
    assert.equal(got.result?.['taskId'], taskId);
    assert.equal(got.result?.['resultType'], 'complete');
    const meta = got.result?.['_meta'] as Record<string, unknown>;
    assert.ok(meta['io.modelcontextprotocol/serverInfo'], 'serverInfo stamped as on HTTP');
  });

  it('an answer to a question the task never asked: the same answer on both', async () => {
    const answer = { inputResponses: { nothing: { action: 'decline' } } };
    const onStdio = await stdio.request('tools/call', { name: 'failing_job' }, TASKS_CAPS);
    const stdioId = onStdio.result?.['taskId'] as string;
    const onHttp = await rpc(http.url, 'tools/call', { name: 'failing_job', arguments: {} });
    const httpId = onHttp.body.result?.['taskId'] as string;
    const overStdio = await stdio.request(
      'tasks/update',
      { taskId: stdioId, ...answer },
      TASKS_CAPS,
    );
    const overHttp = await rpc(http.url, 'tasks/update', { taskId: httpId, ...answer });
    assert.deepEqual(overStdio.error, overHttp.body.error);
    assert.equal(overStdio.result?.['resultType'], overHttp.body.result?.['resultType']);
  });
});
