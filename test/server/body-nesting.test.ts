import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nestingExceeds, parseJsonBody } from '../../src/server/http/body.js';

describe('the nesting bound read from the raw body', () => {
  it('skips brackets inside strings, escaped quotes included', () => {
    assert.equal(nestingExceeds('[[[]]]', 2), true);
    assert.equal(nestingExceeds('["[[[[", "\\"[[[[", "\\\\", [1]]', 2), false);
    assert.equal(nestingExceeds('["\\\\"[[]]]', 2), true);
    assert.equal(nestingExceeds('["\\\\\\"[[]]"]', 2), false);
    assert.equal(nestingExceeds('[[["unterminated [[[[', 2), true);
    assert.equal(nestingExceeds('["unterminated [[[[', 2), false);
  });

  it('refuses a body nested deeper than a request needs before parsing it', () => {
    assert.equal(parseJsonBody(`${'['.repeat(65)}${']'.repeat(65)}`).ok, false);
    assert.equal(parseJsonBody(`${'['.repeat(64)}${']'.repeat(64)}`).ok, true);
    assert.deepEqual(parseJsonBody('{"a":[1]}'), { ok: true, value: { a: [1] } });
    assert.equal(parseJsonBody('{"a":').ok, false);
  });
});
