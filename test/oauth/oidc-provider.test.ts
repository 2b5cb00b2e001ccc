import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import * as z from 'zod/v4';
import { createTaskServer, type TaskServer } from '../../src/server/index.js';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';
import { rpc, TASKS_CAPS } from '../server/support.js';

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };
const SCOPE = 'mcp:tools';

/**
 * A real OpenID provider (the `oidc-provider` package) issuing JWT access tokens for taskrail
 * through the client-credentials grant with a resource indicator (RFC 8707). It publishes
 * only OpenID discovery, so taskrail's fallback from RFC 8414 is exercised too.
 */
describe('taskrail behind a real OpenID provider (oidc-provider)', () => {
  let idp: Server;
  let issuer = '';
  let app: TaskServer;
  let url = '';
  let runs = 0;

  before(async () => {
    idp = createServer();
    await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const signingKey = { ...(await exportJWK(privateKey)), kid: 'idp-1', alg: 'ES256', use: 'sig' };
    const provider = new Provider(issuer, {
      jwks: { keys: [signingKey] },
      clients: [
        {
          client_id: 'claude-host',
          client_secret: 'host-secret',
          grant_types: ['client_credentials'],
          redirect_uris: [],
          response_types: [],
          token_endpoint_auth_method: 'client_secret_post',
          id_token_signed_response_alg: 'ES256',
        },
      ],
      features: {
        devInteractions: { enabled: false },
        clientCredentials: { enabled: true },
        resourceIndicators: {
          enabled: true,
          getResourceServerInfo: (_ctx, resource) => ({
            scope: SCOPE,
            audience: resource,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'ES256' } },
          }),
        },
      },
    });
    idp.on('request', provider.callback());
    app = createTaskServer({
      store: new MemoryTaskStore(),
      logger: silent,
      auth: { oauth: { issuer, scope: SCOPE } },
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
    await new Promise<void>((resolve) => {
      idp.close(() => resolve());
      idp.closeAllConnections();
    });
  });

  async function clientCredentialsToken(scope: string): Promise<string> {
    const metadata = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as {
      token_endpoint: string;
    };
    const res = await fetch(metadata.token_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: 'claude-host',
        client_secret: 'host-secret',
        resource: url,
        scope,
      }),
    });
    const body = (await res.json()) as { access_token?: string };
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(typeof body.access_token, 'string');
    return body.access_token as string;
  }

  it('accepts its JWT access token; the principal is its sub (the client, here)', async () => {
    const token = await clientCredentialsToken(SCOPE);
    assert.equal(token.split('.').length, 3, 'a JWT, not an opaque token');
    const created = await rpc(
      url,
      'tools/call',
      { name: 'whoami', arguments: {} },
      { bearer: token, caps: TASKS_CAPS },
    );
    const taskId = created.body.result?.['taskId'];
    assert.equal(typeof taskId, 'string', JSON.stringify(created.body));
    const sync = await rpc(
      url,
      'tools/call',
      { name: 'whoami', arguments: {} },
      { bearer: token, caps: {} },
    );
    assert.equal((sync.body.result?.['content'] as { text: string }[])[0]?.text, 'claude-host');
    const task = await app.store.get(taskId as string);
    assert.equal(task?.principal, 'claude-host');
  });

  it('refuses its token for another resource', async () => {
    const res = await fetch(url, { method: 'POST', headers: { authorization: 'Bearer nope' } });
    assert.equal(res.status, 401);
    const before = runs;
    const metadata = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as {
      token_endpoint: string;
    };
    const other = await fetch(metadata.token_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: 'claude-host',
        client_secret: 'host-secret',
        resource: 'https://other.example/mcp',
        scope: SCOPE,
      }),
    });
    assert.equal(other.status, 200);
    const token = ((await other.json()) as { access_token: string }).access_token;
    assert.equal(token.split('.').length, 3);
    const refused = await rpc(
      url,
      'tools/call',
      { name: 'whoami', arguments: {} },
      { bearer: token },
    );
    assert.equal(refused.status, 401);
    assert.equal(runs, before);
  });
});
