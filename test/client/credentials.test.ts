import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sameCaller } from '../../src/client/credentials.js';
import { resultText } from '../../src/client/outcome.js';

function jwt(claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'ES256' })}.${part(claims)}.signature`;
}

describe('sameCaller: whose "not found" may mark a task lost', () => {
  it('the same token, or none twice, is the same caller; another token is not', () => {
    assert.equal(sameCaller('alice-token', 'alice-token'), true);
    assert.equal(sameCaller(undefined, undefined), true);
    assert.equal(sameCaller('alice-token', 'bob-token'), false);
    assert.equal(sameCaller(undefined, 'bob-token'), false);
    assert.equal(sameCaller('alice-token', undefined), false);
  });

  it('a refreshed OAuth token (same issuer and subject) is the same caller', () => {
    const first = jwt({ iss: 'https://id.example', sub: 'alice', exp: 1 });
    const refreshed = jwt({ iss: 'https://id.example', sub: 'alice', exp: 2 });
    assert.equal(sameCaller(first, refreshed), true);
    assert.equal(sameCaller(first, jwt({ iss: 'https://id.example', sub: 'bob' })), false);
    assert.equal(sameCaller(first, jwt({ iss: 'https://other.example', sub: 'alice' })), false);
  });
});

describe('resultText: what a person reads of a result', () => {
  it('leaves out the text block that only copies structuredContent', () => {
    const structuredContent = { content: 'hello' };
    const copy = { type: 'text' as const, text: JSON.stringify(structuredContent) };
    const text = { type: 'text' as const, text: 'hello' };
    assert.equal(resultText({ content: [text, copy], structuredContent }), 'hello');
    assert.equal(resultText({ content: [copy], structuredContent }), '{\n  "content": "hello"\n}');
    // A text that merely contains the JSON among other words is the tool's own: kept.
    const own = { type: 'text' as const, text: `report: ${copy.text}` };
    assert.equal(resultText({ content: [own], structuredContent }), own.text);
  });
});
