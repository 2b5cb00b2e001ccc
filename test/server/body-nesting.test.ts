import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bodyShape, nestingExceeds, parseJsonBody } from '../../src/server/http/body.js';

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

  it('counts values only in a body longer than the limit (each separator is a character)', () => {
    assert.equal(bodyShape('[1,2,3]', 64, 7), 'ok');
    assert.equal(bodyShape('[1,2,3,4]', 64, 2), 'too-wide');
    assert.equal(bodyShape('["a,b,c,d,e"]', 64, 2), 'ok', 'separators inside strings are text');
    assert.equal(bodyShape('[[[1]]]', 2, 100), 'too-deep');
    assert.equal(bodyShape(`[${'1,'.repeat(50)}[[[1]]]]`, 2, 10), 'too-wide');
    assert.equal(bodyShape(`[${'1,'.repeat(5)}[[[1]]]]`, 2, 10), 'too-deep');
  });
});
