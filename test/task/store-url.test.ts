import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { storeKindOf } from '../../src/store/url.js';

describe('storeKindOf', () => {
  it('names the backend of each scheme taskrail knows', () => {
    assert.equal(storeKindOf('sqlite:./x.db?synchronous=full'), 'sqlite');
    assert.equal(storeKindOf(' memory: '), 'memory');
    assert.equal(storeKindOf('memory://'), 'memory');
    assert.equal(storeKindOf('redis://127.0.0.1:6379/0'), 'redis');
    assert.equal(storeKindOf('rediss://h:6380/0'), 'redis');
    assert.equal(storeKindOf('postgres://u@h/db'), 'postgres');
    assert.equal(storeKindOf('postgresql://u@h/db'), 'postgres');
  });

  it('knows no other scheme, nor a scheme without its slashes', () => {
    for (const url of ['mysql://h/db', 'redis:h', 'postgres:db', 'memory:x', '', 'tasks.db']) {
      assert.equal(storeKindOf(url), undefined, url);
    }
  });
});
