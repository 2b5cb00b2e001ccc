import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hostVerdict, localHostSet } from '../../src/server/http/host-check.js';

const LOCAL = localHostSet();
const OTHER: ReadonlySet<string> = new Set(['api.example']);

describe('hostVerdict (the Host check, remembered per allowed set)', () => {
  const cases: [ReadonlySet<string> | undefined, string, 'ok' | 'malformed' | 'forbidden'][] = [
    [LOCAL, 'localhost:3000', 'ok'],
    [LOCAL, '127.0.0.1', 'ok'],
    [LOCAL, '[::1]:8080', 'ok'],
    [LOCAL, 'LOCALHOST:3000', 'ok'],
    [LOCAL, 'evil.example', 'forbidden'],
    [LOCAL, 'localhost:3000@evil.example', 'malformed'],
    [LOCAL, 'localhost:99999', 'malformed'],
    [OTHER, 'api.example:443', 'ok'],
    [OTHER, 'localhost:3000', 'forbidden'],
    [undefined, 'anything.example', 'ok'],
    [undefined, 'a b', 'malformed'],
  ];

  it('gives the same verdict the first time and when it is remembered', () => {
    for (let round = 0; round < 3; round++) {
      for (const [allowed, host, expected] of cases) {
        assert.equal(hostVerdict(allowed, host, host, undefined), expected, `${host} (${round})`);
      }
    }
  });

  it('judges an Origin each time, never from what the Host alone got', () => {
    assert.equal(hostVerdict(LOCAL, 'localhost:3000', 'localhost:3000', undefined), 'ok');
    const origin = 'http://evil.example';
    assert.equal(hostVerdict(LOCAL, 'localhost:3000', 'localhost:3000', origin), 'forbidden');
    assert.equal(hostVerdict(LOCAL, 'localhost:3000', 'localhost:3000', 'http://localhost'), 'ok');
  });

  it('checks the URL host of a request without the header, and a missing Host is refused', () => {
    assert.equal(hostVerdict(LOCAL, undefined, 'localhost:3000', undefined), 'ok');
    assert.equal(hostVerdict(LOCAL, undefined, 'evil.example', undefined), 'forbidden');
    assert.equal(hostVerdict(LOCAL, undefined, undefined, undefined), 'forbidden');
  });

  it('stays right past the number of names it remembers', () => {
    for (let i = 0; i < 1000; i++) {
      assert.equal(hostVerdict(LOCAL, `h${i}.example`, `h${i}.example`, undefined), 'forbidden');
      assert.equal(hostVerdict(LOCAL, 'localhost', 'localhost', undefined), 'ok');
    }
  });
});
