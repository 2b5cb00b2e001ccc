import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTaskServer, type TaskServer } from '../../src/server/index.js';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';
import type { Logger } from '../../src/runtime/api.js';
import { httpText, post, wire2026Post } from './support.js';
import { rawInitialize } from '../helpers/raw-session.js';

const ADMIN_TOKEN = 'guard-admin';
const JSON_ACCEPT = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};
/** The probe's body: 3.8 MB nested 1.9 M deep. */
const DEPTH = 1_900_000;

function deepParams(depth = DEPTH): string {
  return `{"deep":${'['.repeat(depth)}${']'.repeat(depth)}}`;
}

function deepBody(method: string): string {
  return `{"jsonrpc":"2.0","id":7,"method":"${method}","params":${deepParams()}}`;
}

interface Server {
  app: TaskServer;
  url: string;
  port: number;
  errors: string[];
}

async function start(): Promise<Server> {
  const errors: string[] = [];
  const logger: Logger = {
    info: () => undefined,
    warn: () => undefined,
    error: (message, fields) => void errors.push(`${message} ${JSON.stringify(fields)}`),
  };
  const app = createTaskServer({
    store: new MemoryTaskStore(),
    logger,
    admin: { tokens: { [ADMIN_TOKEN]: { name: 'ops', canAnswer: true } } },
    maxBodyBytes: 8 * 1024 * 1024,
  }).tool('noop', { description: 'does nothing', task: true }, async () => ({ content: [] }));
  const { url } = await app.listen(0, '127.0.0.1');
  return { app, url, port: Number(new URL(url).port), errors };
}

/** Opens a 2025-11-25 session and returns its id. */
async function openSession(url: string): Promise<string> {
  const { session } = await rawInitialize(url);
  assert.ok(session !== null, 'the session opened');
  return session;
}

function sessionHeaders(session: string): Record<string, string> {
  return { ...JSON_ACCEPT, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' };
}

/** A raw request with any Host header (fetch would not send a malformed one). */
function withHost(
  port: number,
  method: string,
  path: string,
  host: string,
  body?: string,
): Promise<{ status: number; text: string }> {
  const headers = { ...JSON_ACCEPT, host };
  return httpText(port, { method, path, headers, ...(body === undefined ? {} : { body }) });
}

function assertParseError(reply: { status: number; body: Record<string, unknown> }): void {
  assert.equal(reply.status, 400, JSON.stringify(reply.body).slice(0, 300));
  const error = reply.body['error'] as { code: number; message: string };
  assert.equal(error.code, -32700);
  assert.doesNotMatch(error.message, /task store/);
}

describe('request guards', () => {
  let server: Server;
  before(async () => {
    server = await start();
  });
  after(async () => {
    await server.app.close(500);
  });

  describe('JSON nested deeper than any request needs', () => {
    it('is refused on a 2025-11-25 session before it is parsed', async () => {
      const session = await openSession(server.url);
      for (const method of ['ping', 'tools/call', 'tasks/list']) {
        const started = Date.now();
        const reply = await post(server.url, deepBody(method), sessionHeaders(session));
        assertParseError(reply);
        // Parsing and walking it took seconds; the scan before parsing takes a few ms.
        assert.ok(Date.now() - started < 1500, `${method} answered in ${Date.now() - started} ms`);
      }
      const ping = await post(server.url, '{"jsonrpc":"2.0","id":9,"method":"ping"}', {
        ...sessionHeaders(session),
      });
      assert.deepEqual(ping.body['result'], {}, 'the session goes on');
    });

    it('is refused on the 2026-07-28 path and on initialize the same way', async () => {
      const { headers } = wire2026Post('tools/call', { name: 'noop', arguments: {} });
      assertParseError(await post(server.url, deepBody('tools/call'), headers));
      assertParseError(await post(server.url, deepBody('initialize'), JSON_ACCEPT));
    });

    it('is refused on the web-standard face too', async () => {
      const session = await openSession(server.url);
      const res = await server.app.fetch(
        new Request(server.url, {
          method: 'POST',
          headers: sessionHeaders(session),
          body: deepBody('ping'),
        }),
      );
      assertParseError({ status: res.status, body: (await res.json()) as Record<string, unknown> });
    });

    it('is refused as an operator answer, before the task is looked up', async () => {
      const answer = new URL('/dashboard/api/tasks/no-such-task/answer', server.url);
      const res = await fetch(answer, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        // Within the admin API's 1 MB body limit.
        body: `{"inputResponses":{"q":${deepParams(400_000)}}}`,
      });
      const body = (await res.json()) as { error: string };
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(body.error, 'bad_request');
    });
  });

  describe('a malformed Host header', () => {
    const hosts = (port: number): string[] => [
      `localhost:${port}@evil.example`,
      `localhost:${port}/path`,
      `localhost:${port} x`,
      'localhost:99999999',
      'localhost:abc',
    ];

    it('gets 400 with a clear body on every route, and no error line', async () => {
      const before = server.errors.length;
      for (const host of hosts(server.port)) {
        for (const [method, path] of [
          ['POST', '/mcp'],
          ['GET', '/mcp'],
          ['GET', '/dashboard/api/tasks'],
          ['GET', '/metrics'],
        ] as const) {
          const reply = await withHost(
            server.port,
            method,
            path,
            host,
            method === 'POST' ? '{}' : undefined,
          );
          assert.equal(reply.status, 400, `${method} ${path} Host: ${host} → ${reply.text}`);
          assert.match(reply.text, /Host header/);
        }
      }
      assert.deepEqual(server.errors.slice(before), [], 'no error is logged');
    });

    it('leaves well-formed hosts alone', async () => {
      const ok = await withHost(
        server.port,
        'GET',
        '/dashboard/api/tasks',
        `127.0.0.1:${server.port}`,
      );
      assert.equal(ok.status, 401, 'reaches the admin face (which asks for a token)');
      const v6 = await withHost(server.port, 'GET', '/nowhere', `[::1]:${server.port}`);
      assert.equal(v6.status, 404);
    });
  });

  describe('a list cursor the server never gave out', () => {
    const forged = Buffer.from('[1e400,"x"]').toString('base64url');

    it('gets 400 from the admin API, saying so', async () => {
      const before = server.errors.length;
      for (const cursor of ['!!!', 'abc', forged]) {
        const url = new URL('/dashboard/api/tasks', server.url);
        url.searchParams.set('cursor', cursor);
        const res = await fetch(url, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
        const body = (await res.json()) as { error: string; message: string };
        assert.equal(res.status, 400, `cursor ${cursor}: ${JSON.stringify(body)}`);
        assert.equal(body.error, 'bad_request');
        assert.match(body.message, /cursor is not one this server gave out/);
      }
      assert.deepEqual(server.errors.slice(before), []);
      const metrics = await fetch(new URL('/metrics', server.url), {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      assert.doesNotMatch(await metrics.text(), /taskrail_store_errors_total\{operation="list"\}/);
    });

    it('gets -32602 from tasks/list on the 2025-11-25 wire', async () => {
      const session = await openSession(server.url);
      for (const cursor of ['!!!', forged]) {
        const reply = await post(
          server.url,
          JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tasks/list', params: { cursor } }),
          sessionHeaders(session),
        );
        const error = reply.body.error;
        assert.equal(error?.code, -32602, JSON.stringify(reply.body));
        assert.match(error?.message ?? '', /cursor is not one this server gave out/);
      }
    });
  });
});
