import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseRedisUrl } from '../../src/stores/redis/index.js';
import { TaskrailError } from '../../src/task/errors.js';

describe('redis store URL: the Cluster form', () => {
  it('reads ?cluster=1 with the URL host and nodes= as seeds, credentials kept apart', () => {
    const location = parseRedisUrl(
      'rediss://bob:s%40cret@a.test:7000?cluster=1&nodes=b.test:7001,[::1]:7002&prefix=prod',
    );
    assert.deepEqual(location.cluster, {
      nodes: [
        { host: 'a.test', port: 7000 },
        { host: 'b.test', port: 7001 },
        { host: '::1', port: 7002 },
      ],
      username: 'bob',
      password: 's@cret',
      tls: true,
    });
    assert.equal(location.prefix, 'prod');
    assert.equal(location.safeUrl.includes('cret'), false);
    assert.match(location.safeUrl, /cluster=1/);
  });

  it('leaves a plain URL a single Redis', () => {
    assert.equal(parseRedisUrl('redis://h:1/2').cluster, undefined);
    assert.equal(parseRedisUrl('redis://h:1?cluster=0').cluster, undefined);
  });

  it('refuses what a cluster cannot do, saying what to change', () => {
    const refused = (url: string, pattern: RegExp) =>
      assert.throws(
        () => parseRedisUrl(url),
        (error: unknown) => error instanceof TaskrailError && pattern.test(error.message),
      );
    refused('redis://h:1/3?cluster=1', /only database 0: drop '\/3'/);
    refused('redis://h:1?cluster=maybe', /use cluster=1/);
    refused('redis://h:1?nodes=a:1', /nodes= needs cluster=1/);
    refused('redis://h:1?cluster=1&nodes=a:x', /use nodes=HOST:PORT/);
    refused('redis://h:1?prefix=%7Bx%7D', /letters, digits/);
  });
});
