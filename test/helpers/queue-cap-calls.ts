/**
 * Raw HTTP calls for the per-principal cap tests: a keyed task-augmented `tools/call` of the
 * `busy` fixture tool on the 2026-07-28 wire and in a 2025-11-25 session, with what a client
 * sees of the answer (status, `Retry-After`, content type, body).
 */
import assert from 'node:assert/strict';
import { rawHeaders, rawInitialize } from './raw-session.js';

export interface CallAnswer {
  status: number;
  retryAfter: string | null;
  contentType: string | null;
  text: string;
}

const BUSY = { name: 'busy', arguments: { ms: 60_000 } };

async function answerOf(res: Response): Promise<CallAnswer> {
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    contentType: res.headers.get('content-type'),
    text: await res.text(),
  };
}

/** The task id in an answer: the JSON body's, or the last SSE event's. */
export function taskIdIn(answer: CallAnswer): string | undefined {
  const json = answer.text.startsWith('{')
    ? answer.text
    : (answer.text
        .match(/^data: (.*)$/gm)
        ?.at(-1)
        ?.slice(6) ?? '{}');
  const body = JSON.parse(json) as { result?: { task?: { taskId?: string } } };
  return body.result?.task?.taskId;
}

const WIRE_2026 = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'cap', version: '0' },
};

async function callBusy2026(url: string, token: string, meta: object): Promise<CallAnswer> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { ...rawHeaders({ token }), 'mcp-method': 'tools/call', 'mcp-name': 'busy' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { ...BUSY, _meta: { ...WIRE_2026, ...meta } },
    }),
  });
  return answerOf(res);
}

export async function post2026(url: string, token: string, key: string): Promise<CallAnswer> {
  return callBusy2026(url, token, {
    'io.modelcontextprotocol/clientCapabilities': {
      extensions: { 'io.modelcontextprotocol/tasks': {} },
    },
    'dev.taskrail/idempotency-key': key,
  });
}

/** A plain (not task-augmented) 2026-07-28 call: the host waits inline for the result. */
export async function postPlain2026(url: string, token: string): Promise<CallAnswer> {
  return callBusy2026(url, token, { 'io.modelcontextprotocol/clientCapabilities': {} });
}

export async function open2025(url: string, token: string): Promise<string> {
  const { session, status } = await rawInitialize(url, {
    token,
    capabilities: { tasks: { requests: { tools: { call: {} } } } },
    clientInfo: { name: 'cap', version: '0' },
  });
  assert.ok(session, `a 2025-11-25 session (HTTP ${status})`);
  await fetch(url, {
    method: 'POST',
    headers: rawHeaders({ token, session }),
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  }).then((reply) => reply.text());
  return session;
}

export async function call2025(
  url: string,
  token: string,
  session: string,
  key: string,
): Promise<CallAnswer> {
  const params = { ...BUSY, task: { ttl: 60_000 }, _meta: { 'dev.taskrail/idempotency-key': key } };
  const res = await fetch(url, {
    method: 'POST',
    headers: rawHeaders({ token, session }),
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params }),
  });
  return answerOf(res);
}

/** A refusal as the cap makes it: HTTP 429, `Retry-After: 2`, the JSON-RPC error as JSON. */
export function assertQueueFull(answer: CallAnswer, wire: string): void {
  assert.equal(answer.status, 429, `${wire}: ${answer.text}`);
  assert.equal(answer.retryAfter, '2', wire);
  assert.match(answer.contentType ?? '', /application\/json/, wire);
  const body = JSON.parse(answer.text) as { error?: { code?: number; message?: string } };
  assert.equal(body.error?.code, -32000, wire);
  assert.match(body.error?.message ?? '', /Too many unfinished tasks/, wire);
}
