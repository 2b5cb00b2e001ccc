/**
 * A wide body costs its parse to everyone on the event loop. A body past `--max-body` (4 MiB)
 * is refused with 413 before it is read whole: from its Content-Length, or from the bytes read
 * so far (the refusal must arrive while the client is still sending). One under it but holding
 * more values than any request needs (many small objects) is refused with 413 before JSON.parse.
 * Real HTTP on 127.0.0.1.
 */
import assert from 'node:assert/strict';
import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import { after, before, describe, it } from 'node:test';
import {
  createTaskServer,
  DEFAULT_MAX_BODY_BYTES,
  type TaskServer,
} from '../../src/server/index.js';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';
import { MAX_BODY_VALUES } from '../../src/server/http/body.js';
import { post, wire2026Post } from './support.js';
import { rawHeaders, rawInitialize } from '../helpers/raw-session.js';

const DEADLINE_MS = 10_000;
/** The probe's shape: many small objects, the costliest JSON to parse per byte. */
const WIDE_ITEMS = 120_000;
/** Past the 4 MiB bound: the same shape, more of it. */
const OVERSIZED_ITEMS = 240_000;

function wideBody(items = WIDE_ITEMS): string {
  const many = Array.from({ length: items }, (_, i) => `{"a":${i},"b":"x"}`).join(',');
  return JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'echo', arguments: { items: '__ITEMS__' } },
  }).replace('"__ITEMS__"', `[${many}]`);
}

interface Answer {
  status: number;
  text: string;
}

function answerOf(req: ClientRequest): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no answer within ${DEADLINE_MS} ms while the body was unfinished`)),
      DEADLINE_MS,
    );
    req.on('error', reject);
    req.on('response', (res: IncomingMessage) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, text });
      });
    });
  });
}

function open(url: string, headers: Record<string, string | number>): ClientRequest {
  const target = new URL(url);
  return request({
    host: target.hostname,
    port: target.port,
    path: target.pathname,
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
  });
}

/** The headers of a request in a fresh 2025-11-25 session, opened by a raw `initialize`. */
async function sessionHeaders(url: string): Promise<Record<string, string>> {
  const { session, status } = await rawInitialize(url, { id: 0 });
  assert.ok(session, `a 2025-11-25 session (HTTP ${status})`);
  return rawHeaders({ session });
}

function assertRefused(answer: Answer, limit: number): void {
  assert.equal(answer.status, 413, answer.text);
  const body = JSON.parse(answer.text) as { error?: { message?: string } };
  assert.match(body.error?.message ?? '', new RegExp(`at most ${limit} bytes`));
  assert.match(body.error?.message ?? '', /--max-body/);
}

describe('request bodies past the bound are refused before they are parsed (real HTTP)', () => {
  let app: TaskServer;
  let url = '';
  const calls: unknown[] = [];
  before(async () => {
    app = createTaskServer({ store: new MemoryTaskStore() }).tool(
      'echo',
      { description: 'echoes its argument size', task: { mode: 'optional' } },
      async (args) => {
        calls.push(args);
        return { content: [{ type: 'text', text: String(JSON.stringify(args).length) }] };
      },
    );
    ({ url } = await app.listen(0, '127.0.0.1'));
  });
  after(() => app.close(100));

  it('the default bound is 4 MiB, as the interface says', () => {
    assert.equal(DEFAULT_MAX_BODY_BYTES, 4 * 1024 * 1024);
  });

  it('a declared Content-Length past the bound: 413 while the body is still unsent', async () => {
    const body = Buffer.from(wideBody(OVERSIZED_ITEMS));
    assert.ok(body.length > DEFAULT_MAX_BODY_BYTES);
    const req = open(url, { 'content-length': body.length });
    const answer = answerOf(req);
    // Only the first 64 KiB go out; the rest is never sent.
    req.write(body.subarray(0, 64 * 1024));
    assertRefused(await answer, DEFAULT_MAX_BODY_BYTES);
    req.destroy();
    assert.equal(calls.length, 0);
  });

  it('a chunked body past the bound: 413 once the bytes read pass it, before its end', async () => {
    const body = Buffer.from(wideBody(OVERSIZED_ITEMS));
    const req = open(url, { 'transfer-encoding': 'chunked' });
    const answer = answerOf(req);
    // Everything but the last 64 KiB, and no end: the server cannot have parsed it.
    req.write(body.subarray(0, body.length - 64 * 1024));
    assertRefused(await answer, DEFAULT_MAX_BODY_BYTES);
    req.destroy();
    assert.equal(calls.length, 0);
  });

  for (const wire of ['2026-07-28', '2025-11-25 session'] as const) {
    it(`a body under the bound with more values than any request needs: 413 unparsed (${wire})`, async () => {
      const body = wideBody();
      assert.ok(body.length < DEFAULT_MAX_BODY_BYTES);
      const reply =
        wire === '2026-07-28'
          ? await post(url, body, wire2026Post('tools/call', {}).headers)
          : await post(url, body, await sessionHeaders(url));
      assert.equal(reply.status, 413, JSON.stringify(reply.body));
      const message = (reply.body as { error?: { message?: string } }).error?.message ?? '';
      assert.match(message, new RegExp(`more than ${MAX_BODY_VALUES} JSON values`));
      assert.match(message, /split the request/);
      assert.equal(calls.length, 0);
    });
  }

  it('the largest argument the runtime accepts still fits', async () => {
    const args = { text: 'x'.repeat(1024 * 1024 - 20) };
    const { body, headers } = wire2026Post('tools/call', { name: 'echo', arguments: args });
    const reply = await post(url, body, headers);
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.equal(calls.length, 1, JSON.stringify(reply.body));
  });
});
