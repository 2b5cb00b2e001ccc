import type { Logger } from '../../runtime/api.js';
import { TaskrailError } from '../../task/errors.js';
import { bearerOf, SecretTable } from '../http/auth.js';
import { bearerChallenge, metadataUrlOf } from '../oauth/resource-metadata.js';
import { OAuthVerifier } from '../oauth/verifier.js';
import { json } from './api.js';
import type { AdminOperator, AdminTokenMap } from './tokens.js';

/** `--admin oauth:ISSUER_URL`: operators are OAuth subjects holding an admin scope. */
export interface AdminOAuthOptions {
  issuer: string;
  /** Scope that may read `/metrics` and the dashboard. Default `taskrail:admin`. */
  scope?: string;
  /** Scope that may also cancel tasks and answer their input. Default `<scope>:write`. */
  writeScope?: string;
  /** The resource URL admin tokens must name in `aud`. Default: the server's resource URL. */
  resource?: string;
  clockToleranceSec?: number;
  jwksCooldownMs?: number;
}

export const DEFAULT_ADMIN_SCOPE = 'taskrail:admin';

export type AdminCheck = { ok: true; operator: AdminOperator } | { ok: false; response: Response };

/** Who an admin request comes from, or the response that refuses it. */
export type AdminAuthenticator = (authorization: string | null) => Promise<AdminCheck>;

const REALM = 'taskrail-admin';

function refuse(status: number, error: string, message: string, challenge: string): AdminCheck {
  const response = json(status, { error, message });
  response.headers.set('www-authenticate', challenge);
  return { ok: false, response };
}

export function tokenOperators(tokens: AdminTokenMap): AdminAuthenticator {
  const table = new SecretTable(Object.entries(tokens));
  return (authorization) => {
    const operator = table.find(bearerOf(authorization));
    if (operator !== undefined) return Promise.resolve({ ok: true, operator });
    const challenge = bearerChallenge({ realm: REALM });
    return Promise.resolve(
      refuse(401, 'unauthorized', 'an admin bearer token is required', challenge),
    );
  };
}

export function oauthOperators(
  options: AdminOAuthOptions,
  serverResource: () => string | undefined,
  logger?: Logger,
): AdminAuthenticator {
  const readScope = options.scope ?? DEFAULT_ADMIN_SCOPE;
  const writeScope = options.writeScope ?? `${readScope}:write`;
  if (readScope === '' || writeScope === '' || readScope === writeScope) {
    throw new TaskrailError(
      'CONFIG',
      'the admin read and write scopes must be two non-empty names',
    );
  }
  const resource = (): string | undefined => options.resource ?? serverResource();
  const verifier = new OAuthVerifier({ ...options, resource, scope: undefined });
  const challenge = (extra: Parameters<typeof bearerChallenge>[0] = {}): string => {
    const url = resource();
    const metadataUrl = url === undefined ? undefined : metadataUrlOf(url);
    return bearerChallenge({ realm: REALM, metadataUrl, scope: readScope, ...extra });
  };
  return async (authorization) => {
    const token = bearerOf(authorization);
    if (token === undefined) {
      return refuse(401, 'unauthorized', 'an admin access token is required', challenge());
    }
    const check = await verifier.verify(token);
    if (!check.ok && check.error === 'unavailable') {
      logger?.warn('cannot verify admin tokens', { issuer: verifier.issuer, reason: check.reason });
      return {
        ok: false,
        response: json(503, { error: 'auth_unavailable', message: 'retry later' }),
      };
    }
    if (!check.ok) {
      const header = challenge({ error: 'invalid_token', description: check.reason });
      return refuse(401, 'invalid_token', check.reason, header);
    }
    const { principal, clientId, scopes } = check.token;
    const canWrite = scopes.includes(writeScope);
    if (!canWrite && !scopes.includes(readScope)) {
      const header = challenge({ error: 'insufficient_scope' });
      return refuse(403, 'insufficient_scope', `scope ${readScope} is required`, header);
    }
    const name =
      clientId === undefined || clientId === principal ? principal : `${principal} (${clientId})`;
    return { ok: true, operator: { name, canAnswer: canWrite, canCancel: canWrite } };
  };
}
