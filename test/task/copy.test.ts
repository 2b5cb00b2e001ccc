import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { merged } from '../../src/task/copy.js';

describe('merged: a spread built key by key', () => {
  it('copies as `{ ...base, ...extra }` does: order, overrides, no shared top level', () => {
    const base = { a: 1, b: { deep: true }, c: 'x' };
    const out = merged(base, { c: 'y', d: 4 });
    assert.deepEqual(out, { ...base, ...{ c: 'y', d: 4 } });
    assert.deepEqual(Object.keys(out), ['a', 'b', 'c', 'd']);
    assert.notEqual(out, base);
    assert.equal(out.b, base.b);
    assert.deepEqual(merged(base), base);
  });

  it('keeps a parsed `__proto__` key an own property and leaves the prototype alone', () => {
    const parsed = JSON.parse('{"__proto__": {"polluted": true}, "k": 1}') as object;
    const out = merged(parsed, { n: 2 }) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(out), Object.prototype);
    assert.deepEqual(Object.keys(out), ['__proto__', 'k', 'n']);
    assert.equal(JSON.stringify(out), JSON.stringify({ ...parsed, n: 2 }));
    assert.equal((out as { polluted?: unknown }).polluted, undefined);
  });

  it('copies no inherited key', () => {
    const base = Object.create({ inherited: 1 }) as Record<string, unknown>;
    base['own'] = 2;
    assert.deepEqual(Object.keys(merged(base)), ['own']);
  });
});
