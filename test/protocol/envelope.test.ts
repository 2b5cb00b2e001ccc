import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  checkEnvelope,
  checkRoutingHeaders,
  decodeHeaderValue,
  declaresTasks,
  isWire2026Request,
  isWireError,
  type HeaderReader,
  type WireError,
} from '../../src/protocol/index.js';

const headers =
  (values: Record<string, string>): HeaderReader =>
  (name) =>
    values[name];
const base64 = (text: string) => `=?base64?${Buffer.from(text).toString('base64')}?=`;
const TASKS = 'io.modelcontextprotocol/tasks';
const meta = (extra: Record<string, unknown> = {}) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } },
  ...extra,
});

function wireError(value: unknown): WireError {
  assert.ok(value !== undefined && isWireError(value as WireError), JSON.stringify(value));
  return value as WireError;
}

describe('header values (SEP-2243)', () => {
  it('trims plain values and decodes the base64 sentinel as UTF-8', () => {
    assert.equal(decodeHeaderValue('  tasks/get \t'), 'tasks/get');
    assert.equal(decodeHeaderValue(base64('résumé ✓')), 'résumé ✓');
    assert.equal(decodeHeaderValue(` ${base64('x')} `), 'x');
    assert.equal(decodeHeaderValue(undefined), undefined);
  });

  it('keeps a value that only looks like the sentinel as it is', () => {
    assert.equal(decodeHeaderValue('=?base64?!!?='), '=?base64?!!?=');
    assert.equal(decodeHeaderValue('=?utf-8?eA==?='), '=?utf-8?eA==?=');
  });
});

describe('which wire a request is on', () => {
  it('2026-07-28 when the header or _meta names a protocol version', () => {
    assert.ok(isWire2026Request(headers({ 'mcp-protocol-version': '2026-07-28' }), {}));
    assert.ok(isWire2026Request(headers({}), { _meta: meta() }));
    assert.equal(isWire2026Request(headers({}), { _meta: {} }), false);
    assert.equal(isWire2026Request(headers({}), undefined), false);
  });
});

describe('routing headers against the body', () => {
  const call = { name: 'greet', arguments: {} };
  const good = { 'mcp-method': 'tools/call', 'mcp-name': 'greet' };

  it('accepts headers that repeat the body, base64 or not', () => {
    assert.equal(checkRoutingHeaders('tools/call', call, headers(good)), undefined);
    const encoded = { 'mcp-method': base64('tools/call'), 'mcp-name': base64('greet') };
    assert.equal(checkRoutingHeaders('tools/call', call, headers(encoded)), undefined);
  });

  it('refuses a missing or different Mcp-Method with -32020 and HTTP 400', () => {
    for (const values of [{}, { 'mcp-method': 'tools/list' }] as Record<string, string>[]) {
      const error = wireError(checkRoutingHeaders('tools/call', call, headers(values)));
      assert.equal(error.httpStatus, 400);
      assert.equal(error.error.code, -32020);
      assert.match(error.error.message, /^Header mismatch: .*Mcp-Method/);
    }
  });

  it('wants Mcp-Name to repeat the name, uri or taskId of the methods that have one', () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['tools/call', call, 'greet'],
      ['prompts/get', { name: 'p' }, 'p'],
      ['resources/read', { uri: 'file:///a' }, 'file:///a'],
      ['tasks/get', { taskId: 'T1' }, 'T1'],
      ['tasks/update', { taskId: 'T1' }, 'T1'],
      ['tasks/cancel', { taskId: 'T1' }, 'T1'],
    ];
    for (const [method, params, name] of cases) {
      const ok = headers({ 'mcp-method': method, 'mcp-name': name });
      assert.equal(checkRoutingHeaders(method, params, ok), undefined, method);
      const missing = wireError(
        checkRoutingHeaders(method, params, headers({ 'mcp-method': method })),
      );
      assert.match(missing.error.message, /Mcp-Name header is required/, method);
      const other = headers({ 'mcp-method': method, 'mcp-name': `${name}x` });
      assert.match(
        wireError(checkRoutingHeaders(method, params, other)).error.message,
        /Mcp-Name does not match/,
      );
    }
  });

  it('needs no Mcp-Name for other methods, or when the body has no string to repeat', () => {
    assert.equal(
      checkRoutingHeaders('tools/list', {}, headers({ 'mcp-method': 'tools/list' })),
      undefined,
    );
    const noName = headers({ 'mcp-method': 'tools/call' });
    assert.equal(checkRoutingHeaders('tools/call', { name: 7 }, noName), undefined);
  });

  it('refuses a header protocol version that contradicts _meta', () => {
    const values = { ...good, 'mcp-protocol-version': '2025-11-25' };
    const error = wireError(
      checkRoutingHeaders('tools/call', { ...call, _meta: meta() }, headers(values)),
    );
    assert.equal(error.error.code, -32020);
    assert.match(error.error.message, /MCP-Protocol-Version/);
    const same = { ...good, 'mcp-protocol-version': '2026-07-28' };
    assert.equal(
      checkRoutingHeaders('tools/call', { ...call, _meta: meta() }, headers(same)),
      undefined,
    );
  });
});

describe('the _meta envelope', () => {
  it('reads the version and capabilities, and whether the tasks extension is declared', () => {
    const envelope = checkEnvelope({ _meta: meta() }, headers({}));
    assert.ok(!isWireError(envelope));
    assert.equal(envelope.protocolVersion, '2026-07-28');
    assert.equal(envelope.declaresTasks, true);
    const without = checkEnvelope(
      { _meta: meta({ 'io.modelcontextprotocol/clientCapabilities': {} }) },
      headers({}),
    );
    assert.ok(!isWireError(without));
    assert.equal(without.declaresTasks, false);
  });

  it('refuses a missing protocol version with -32602, HTTP 400', () => {
    for (const params of [undefined, {}, { _meta: {} }, { _meta: 'x' }]) {
      const error = wireError(checkEnvelope(params, headers({})));
      assert.equal(error.httpStatus, 400);
      assert.equal(error.error.code, -32602);
      assert.match(error.error.message, /protocolVersion"\] is required/);
    }
  });

  it('refuses an unsupported version with -32022 naming the supported ones', () => {
    const fromMeta = wireError(
      checkEnvelope(
        { _meta: meta({ 'io.modelcontextprotocol/protocolVersion': '2099-01-01' }) },
        headers({}),
      ),
    );
    assert.equal(fromMeta.error.code, -32022);
    assert.deepEqual(fromMeta.error.data, { supported: ['2026-07-28'], requested: '2099-01-01' });
    // Only the header names a version, and not one we speak: that is what the caller hears.
    const fromHeader = wireError(checkEnvelope({}, headers({ 'mcp-protocol-version': 'v999' })));
    assert.equal(fromHeader.error.code, -32022);
    const notText = wireError(
      checkEnvelope(
        { _meta: meta({ 'io.modelcontextprotocol/protocolVersion': 20260728 }) },
        headers({}),
      ),
    );
    assert.equal(notText.error.code, -32022);
  });

  it('refuses missing client capabilities with -32602', () => {
    const params = { _meta: meta({ 'io.modelcontextprotocol/clientCapabilities': [] }) };
    const error = wireError(checkEnvelope(params, headers({})));
    assert.equal(error.error.code, -32602);
    assert.match(error.error.message, /clientCapabilities"\] is required/);
  });

  it('counts only the extension, not the 2025-11-25 tasks capability', () => {
    assert.equal(declaresTasks({ extensions: { [TASKS]: {} } }), true);
    assert.equal(declaresTasks({ tasks: {} }), false);
    assert.equal(declaresTasks({ extensions: { [TASKS]: true } }), false);
    assert.equal(declaresTasks({ extensions: [] }), false);
    assert.equal(declaresTasks(null), false);
  });
});
