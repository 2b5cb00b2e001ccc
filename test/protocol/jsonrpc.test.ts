import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  HEADER,
  LISTEN_METHOD,
  META,
  TASKS_EXTENSION,
  WIRE_2025_VERSION,
  WIRE_2026_VERSION,
  errorMessage,
  headerMismatch,
  internalError,
  invalidParams,
  invalidRequest,
  isIncomingRequest,
  isRemovedTaskMethod,
  isTaskMethod,
  methodNotFound,
  missingTasksCapability,
  parseError,
  peekId,
  readRequest,
  resultMessage,
  resultMessageOfJson,
  taskNotFound,
  unsupportedProtocolVersion,
} from '../../src/protocol/index.js';

describe('reading a JSON-RPC request', () => {
  it('takes jsonrpc 2.0, a string method and a string or finite number id', () => {
    for (const id of [1, 0, -1.5, 'a', '', undefined]) {
      const read = readRequest({ jsonrpc: '2.0', id, method: 'tasks/get', params: { x: 1 } });
      assert.ok(isIncomingRequest(read), JSON.stringify(id));
      assert.deepEqual(read, { id, method: 'tasks/get', params: { x: 1 } });
    }
  });

  it('refuses every other shape with -32600 and HTTP 400, saying what is wrong', () => {
    const cases: [unknown, RegExp][] = [
      [null, /one JSON-RPC object/],
      [[{ jsonrpc: '2.0', method: 'x' }], /one JSON-RPC object/],
      ['tasks/get', /one JSON-RPC object/],
      [{ method: 'x' }, /jsonrpc must be "2.0"/],
      [{ jsonrpc: 2, method: 'x' }, /jsonrpc must be "2.0"/],
      [{ jsonrpc: '2.0' }, /method must be a string/],
      [{ jsonrpc: '2.0', method: 7 }, /method must be a string/],
      [{ jsonrpc: '2.0', method: 'x', id: null }, /id must be/],
      [{ jsonrpc: '2.0', method: 'x', id: {} }, /id must be/],
      [{ jsonrpc: '2.0', method: 'x', id: Number.NaN }, /id must be/],
      [{ jsonrpc: '2.0', method: 'x', id: Infinity }, /id must be/],
    ];
    for (const [body, message] of cases) {
      const read = readRequest(body);
      assert.ok(!isIncomingRequest(read), JSON.stringify(body));
      assert.equal(read.httpStatus, 400);
      assert.equal(read.error.code, -32600);
      assert.match(read.error.message, message);
    }
  });

  it('peeks an id good enough to answer with, else null', () => {
    assert.equal(peekId({ id: 4 }), 4);
    assert.equal(peekId({ id: 'x' }), 'x');
    for (const body of [{ id: null }, { id: {} }, { id: Number.NaN }, [], 'x', null]) {
      assert.equal(peekId(body), null, JSON.stringify(body));
    }
  });
});

describe('framing answers', () => {
  it('writes the same bytes from a result object and from its JSON', () => {
    const result = { resultType: 'complete', n: [1, 'é'] };
    for (const id of [1, 'a"b']) {
      assert.equal(resultMessageOfJson(id, JSON.stringify(result)), resultMessage(id, result));
      assert.deepEqual(JSON.parse(resultMessage(id, result)), { jsonrpc: '2.0', id, result });
    }
  });

  it('frames an error with its id or null', () => {
    const error = { code: -32602, message: 'bad' };
    assert.deepEqual(JSON.parse(errorMessage(null, error)), { jsonrpc: '2.0', id: null, error });
    assert.deepEqual(JSON.parse(errorMessage(3, error)).id, 3);
  });
});

describe('wire errors: code and HTTP status', () => {
  it('gives each error its JSON-RPC code and the status the transport requires', () => {
    const table: [string, ReturnType<typeof parseError>, number, number][] = [
      ['parse error', parseError(), 400, -32700],
      ['invalid request', invalidRequest('x'), 400, -32600],
      ['method not found', methodNotFound('nope/nope'), 404, -32601],
      ['invalid params', invalidParams('x'), 400, -32602],
      ['task not found', taskNotFound(), 200, -32602],
      ['header mismatch', headerMismatch('x'), 400, -32020],
      ['missing capability', missingTasksCapability(), 400, -32021],
      ['unsupported version', unsupportedProtocolVersion('v9'), 400, -32022],
      ['internal error', internalError(), 500, -32603],
    ];
    for (const [name, error, status, code] of table) {
      assert.equal(error.httpStatus, status, name);
      assert.equal(error.error.code, code, name);
    }
    assert.equal(methodNotFound('nope/nope').error.message, 'Method not found: nope/nope');
  });

  it('answers an unknown, expired and foreign task alike, in band', () => {
    assert.deepEqual(taskNotFound().error, {
      code: -32602,
      message: 'Failed to retrieve task: Task not found',
    });
  });

  it('names the missing tasks extension as ClientCapabilities', () => {
    assert.deepEqual(missingTasksCapability().error.data, {
      requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } },
    });
  });
});

describe('wire constants', () => {
  it('are the values the specification names', () => {
    assert.equal(TASKS_EXTENSION, 'io.modelcontextprotocol/tasks');
    assert.equal(WIRE_2026_VERSION, '2026-07-28');
    assert.equal(WIRE_2025_VERSION, '2025-11-25');
    assert.equal(LISTEN_METHOD, 'subscriptions/listen');
    assert.deepEqual(HEADER, {
      protocolVersion: 'mcp-protocol-version',
      method: 'mcp-method',
      name: 'mcp-name',
      sessionId: 'mcp-session-id',
    });
    assert.equal(META.protocolVersion, 'io.modelcontextprotocol/protocolVersion');
    assert.equal(META.clientCapabilities, 'io.modelcontextprotocol/clientCapabilities');
  });

  it('tell the extension task methods from the removed 2025-11-25 ones', () => {
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      assert.ok(isTaskMethod(method), method);
      assert.equal(isRemovedTaskMethod(method), false, method);
    }
    for (const method of ['tasks/result', 'tasks/list']) {
      assert.ok(isRemovedTaskMethod(method), method);
      assert.equal(isTaskMethod(method), false, method);
    }
    for (const other of ['tools/call', 'tasks/', undefined, 1]) {
      assert.equal(isTaskMethod(other), false);
      assert.equal(isRemovedTaskMethod(other), false);
    }
  });
});
