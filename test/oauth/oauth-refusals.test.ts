import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as z from 'zod/v4';
import { createTaskServer, type TaskServer } from '../../src/server/index.js';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';
import { rpc } from '../server/support.js';
import { makeKey, TestAuthServer, type TestKey } from './auth-server.js';

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

describe('OAuth resource server: which tokens get in', () => {
  const as = new TestAuthServer();
  let rsa: TestKey;
  let ec: TestKey;
  let app: TaskServer;
  let url = '';
  let runs = 0;

  before(async () => {
    rsa = await makeKey('rsa-1', 'RS256');
    ec = await makeKey('ec-1', 'ES256');
    await as.start(rsa, ec);
    app = createTaskServer({
      store: new MemoryTaskStore(),
      logger: silent,
      auth: { oauth: { issuer: as.issuer, jwksCooldownMs: 0 } },
    });
    app.tool(
      'whoami',
      { description: 'Names the caller', inputSchema: z.object({}), task: true },
      (_args, ctx) => {
        runs += 1;
        return { content: [{ type: 'text', text: ctx.principal }] };
      },
    );
    url = (await app.listen(0, '127.0.0.1')).url;
  });
  after(async () => {
    await app.close(1000);
    await as.close();
  });

  const call = (bearer?: string) =>
    rpc(
      url,
      'tools/call',
      { name: 'whoami', arguments: {} },
      bearer === undefined ? {} : { bearer },
    );

  async function challengeOf(
    bearer?: string,
    authorization = bearer === undefined ? undefined : `Bearer ${bearer}`,
  ): Promise<{ status: number; header: string }> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (authorization !== undefined) headers['authorization'] = authorization;
    const res = await fetch(url, { method: 'POST', headers, body: '{}' });
    await res.body?.cancel();
    return { status: res.status, header: res.headers.get('www-authenticate') ?? '' };
  }

  const metadataUrl = (): string =>
    `${new URL(url).origin}/.well-known/oauth-protected-resource/mcp`;

  it('serves RFC 9728 metadata at both well-known paths, without a token', async () => {
    for (const path of [
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
    ]) {
      const res = await fetch(new URL(path, url));
      assert.equal(res.status, 200, path);
      const doc = (await res.json()) as Record<string, unknown>;
      assert.equal(doc['resource'], url);
      assert.deepEqual(doc['authorization_servers'], [as.issuer]);
    }
  });

  it('401 with resource_metadata and no error when no token is sent', async () => {
    const { status, header } = await challengeOf();
    assert.equal(status, 401);
    assert.equal(header, `Bearer resource_metadata="${metadataUrl()}"`);
  });

  it('refuses expired, wrong aud, wrong iss, unknown kid, alg none and HS256-with-public-key', async () => {
    const stranger = await makeKey('not-published', 'RS256');
    const bad: Record<string, string> = {
      expired: await as.token(rsa, { expiresIn: -120 }, url),
      'not yet valid': await as.token(rsa, { notBefore: 600 }, url),
      'wrong aud': await as.token(rsa, { aud: 'http://127.0.0.1:1/other' }, url),
      'wrong iss': await as.token(rsa, { iss: 'http://127.0.0.1:1/evil' }, url),
      'unknown kid': await as.token(stranger, {}, url),
      'alg none': as.unsigned('alice', url),
      'HS256 with the public key': await as.hmacWithPublicKey(rsa, 'alice', url),
      garbage: 'not.a.jwt',
    };
    for (const [why, token] of Object.entries(bad)) {
      const { status, header } = await challengeOf(token);
      assert.equal(status, 401, why);
      assert.match(
        header,
        new RegExp(`^Bearer resource_metadata="${metadataUrl()}", error="invalid_token"`),
        why,
      );
      assert.equal((await call(token)).status, 401, why);
    }
    const basic = await challengeOf(undefined, 'Basic YWxpY2U6c2VjcmV0');
    assert.equal(basic.status, 401);
    assert.match(basic.header, /error="invalid_token"/);
    assert.equal(runs, 0, 'no refused request ran the tool');
  });

  it('takes only access tokens: typ at+jwt (or application/at+jwt), with a clear refusal else', async () => {
    for (const typ of ['JWT', 'logout+jwt', null]) {
      const res = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${await as.token(rsa, { typ }, url)}`,
        },
        body: '{}',
      });
      const body = (await res.json()) as Record<string, unknown>;
      assert.equal(res.status, 401, String(typ));
      assert.match(res.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
      assert.match(String(body['error_description']), /"typ" header .*"at\+jwt" \(RFC 9068\)/);
    }
    for (const typ of ['application/at+jwt', 'AT+JWT']) {
      const token = await as.token(rsa, { typ }, url);
      assert.equal((await challengeOf(token)).status, 400, `${typ} gets past auth to the body`);
    }
    assert.equal(runs, 0, 'no refused request ran the tool');
  });

  it('accepts RS256 and ES256 tokens; the principal is sub', async () => {
    for (const [key, sub] of [
      [rsa, 'alice'],
      [ec, 'bob'],
    ] as const) {
      const reply = await rpc(
        url,
        'tools/call',
        { name: 'whoami', arguments: {} },
        { bearer: await as.token(key, { sub }, url), caps: {} },
      );
      assert.equal(reply.status, 200, JSON.stringify(reply.body));
      const content = reply.body.result?.['content'] as { text: string }[];
      assert.equal(content[0]?.text, sub);
    }
    assert.equal(runs, 2);
  });

  it('picks up a rotated key (new kid) without a restart', async () => {
    await call(await as.token(rsa, {}, url));
    const before = as.jwksFetches;
    const next = await makeKey('rsa-2', 'RS256');
    const early = await as.token(next, { sub: 'carol' }, url);
    assert.equal((await challengeOf(early)).status, 401, 'not yet published');
    as.publish(next);
    const reply = await rpc(
      url,
      'tools/call',
      { name: 'whoami', arguments: {} },
      { bearer: await as.token(next, { sub: 'carol' }, url), caps: {} },
    );
    assert.equal(reply.status, 200);
    assert.equal((reply.body.result?.['content'] as { text: string }[])[0]?.text, 'carol');
    assert.ok(as.jwksFetches > before, 'the key set was fetched again');
  });

  it('answers the same on the web-standard fetch face', async () => {
    const request = (bearer?: string): Request =>
      new Request(url, {
        method: 'POST',
        headers: {
          host: new URL(url).host,
          'content-type': 'application/json',
          ...(bearer === undefined ? {} : { authorization: `Bearer ${bearer}` }),
        },
        body: '{}',
      });
    const none = await app.fetch(request());
    assert.equal(none.status, 401);
    assert.equal(
      none.headers.get('www-authenticate'),
      `Bearer resource_metadata="${metadataUrl()}"`,
    );
    const expired = await app.fetch(request(await as.token(ec, { expiresIn: -120 }, url)));
    assert.equal(expired.status, 401);
    assert.match(expired.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
    const ok = await app.fetch(request(await as.token(ec, {}, url)));
    assert.notEqual(ok.status, 401);
    const meta = await app.fetch(
      new Request(new URL('/.well-known/oauth-protected-resource', url)),
    );
    assert.equal(meta.status, 200);
  });
});
