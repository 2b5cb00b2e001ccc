import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { unauthorizedError } from '../../src/client/errors.js';
import { bearerFrom, parseAuthSpec } from '../../src/cli/options.js';
import { SecretTable } from '../../src/server/http/auth.js';
import { metadataUrls } from '../../src/server/oauth/discovery.js';
import { bearerChallenge, metadataUrlOf } from '../../src/server/oauth/resource-metadata.js';

describe('OAuth pure parts', () => {
  it('discovers RFC 8414 metadata by path insertion, then OpenID configuration', () => {
    assert.deepEqual(metadataUrls('https://auth.example.com/realms/mcp').map(String), [
      'https://auth.example.com/.well-known/oauth-authorization-server/realms/mcp',
      'https://auth.example.com/.well-known/openid-configuration/realms/mcp',
      'https://auth.example.com/realms/mcp/.well-known/openid-configuration',
    ]);
    assert.deepEqual(metadataUrls('https://tenant.auth0.com/').map(String), [
      'https://tenant.auth0.com/.well-known/oauth-authorization-server',
      'https://tenant.auth0.com/.well-known/openid-configuration',
    ]);
  });

  it('puts the resource metadata URL under the resource origin (RFC 9728 §3.1)', () => {
    assert.equal(
      metadataUrlOf('https://mcp.example.com/mcp'),
      'https://mcp.example.com/.well-known/oauth-protected-resource/mcp',
    );
    assert.equal(
      metadataUrlOf('https://mcp.example.com/'),
      'https://mcp.example.com/.well-known/oauth-protected-resource',
    );
  });

  it('writes challenges a client can parse back, quotes escaped', () => {
    const header = bearerChallenge({
      metadataUrl: 'https://x/.well-known/oauth-protected-resource/mcp',
      error: 'invalid_token',
      description: 'the "exp" claim failed',
    });
    const error = unauthorizedError('https://x/mcp', 401, header);
    assert.equal(error.code, 'UNAUTHORIZED');
    assert.equal(error.resourceMetadata, 'https://x/.well-known/oauth-protected-resource/mcp');
    assert.match(error.message, /invalid_token: the "exp" claim failed/);
    const scope = unauthorizedError(
      'https://x/mcp',
      403,
      bearerChallenge({ error: 'insufficient_scope', scope: 'mcp:tools' }),
    );
    assert.match(scope.message, /lacks the scope mcp:tools/);
    assert.equal(unauthorizedError('https://x/mcp', 401, 'Bearer').resourceMetadata, undefined);
  });

  it('finds secrets by digest: exact matches only', () => {
    const table = new SecretTable([
      ['s3cret-a', 'alice'],
      ['s3cret-b', 'bob'],
    ]);
    assert.equal(table.find('s3cret-a'), 'alice');
    assert.equal(table.find('s3cret-b'), 'bob');
    for (const wrong of ['s3cret', 's3cret-a ', 'S3CRET-A', '', undefined]) {
      assert.equal(table.find(wrong), undefined, String(wrong));
    }
  });

  it('takes the bearer from the flag, else TASKRAIL_BEARER; parses --auth specs', () => {
    assert.equal(bearerFrom('flag', { TASKRAIL_BEARER: 'env' }), 'flag');
    assert.equal(bearerFrom(undefined, { TASKRAIL_BEARER: ' env ' }), 'env');
    assert.equal(bearerFrom(undefined, { TASKRAIL_BEARER: '' }), undefined);
    assert.equal(bearerFrom(undefined, {}), undefined);
    assert.deepEqual(parseAuthSpec('oauth:https://a.example/r'), {
      kind: 'oauth',
      issuer: 'https://a.example/r',
    });
    assert.deepEqual(parseAuthSpec('tokens:t.json'), { kind: 'tokens', file: 't.json' });
    assert.throws(() => parseAuthSpec('oauth:not a url'), /issuer URL/);
    assert.throws(() => parseAuthSpec('jwt:x'), /tokens:FILE .* or oauth:ISSUER_URL/);
  });
});
