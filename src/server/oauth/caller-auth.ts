import type { Logger } from '../../runtime/api.js';
import { TaskrailError } from '../../task/errors.js';
import { bearerOf, type Authentication, type AuthReply, type CallerAuth } from '../http/auth.js';
import { authenticatedPrincipal, authInfoFor } from '../tasks/principal.js';
import {
  bearerChallenge,
  metadataPaths,
  metadataUrlOf,
  resourceMetadata,
  type Challenge,
} from './resource-metadata.js';
import { OAuthVerifier, type TokenCheck } from './verifier.js';

/** `--auth oauth:ISSUER_URL`: taskrail as an OAuth 2.1 resource server. */
export interface OAuthOptions {
  /** The authorization server's issuer identifier, exactly as its tokens carry it in `iss`. */
  issuer: string;
  /**
   * This server's resource URL, which tokens must name in `aud`. Default: the URL `listen()`
   * prints. Required when the handler is mounted in another server (or behind a proxy).
   */
  resource?: string;
  /** A scope every token must carry. */
  scope?: string;
  /** Leeway for `exp`/`nbf`, in seconds. Default 30. */
  clockToleranceSec?: number;
  /** Least time between two key-set fetches for an unknown `kid`. Default 30 s. */
  jwksCooldownMs?: number;
}

export interface OAuthCallerAuth extends CallerAuth {
  readonly verifier: OAuthVerifier;
}

/** Checks a resource URL (RFC 8707: absolute, no fragment). */
export function checkResourceUrl(resource: string): string {
  if (!URL.canParse(resource) || new URL(resource).hash !== '') {
    throw new TaskrailError(
      'CONFIG',
      `the resource ${resource} must be an absolute URL without a fragment, e.g. https://mcp.example.com/mcp`,
    );
  }
  return resource;
}

const json = (status: number, body: object, headers: Record<string, string> = {}): AuthReply => ({
  status,
  headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers },
  body: JSON.stringify(body),
});

const SEEN_LIMIT = 10_000;

/** Logs each principal and client pair once (the log says who came in through which client). */
function noteCaller(seen: Set<string>, logger: Logger, principal: string, clientId?: string): void {
  const key = `${principal}\0${clientId ?? ''}`;
  if (seen.has(key)) return;
  if (seen.size >= SEEN_LIMIT) seen.clear();
  seen.add(key);
  logger.info('caller authenticated', { principal, clientId: clientId ?? null });
}

/** `resource` gives the URL tokens must name in `aud`, once known (see `OAuthOptions.resource`). */
export function oauthAuth(
  options: OAuthOptions,
  endpointPath: string,
  resourceUrl: () => string | undefined,
  logger?: Logger,
): OAuthCallerAuth {
  const verifier = new OAuthVerifier({
    issuer: options.issuer,
    resource: resourceUrl,
    scope: options.scope,
    ...(options.clockToleranceSec === undefined
      ? {}
      : { clockToleranceSec: options.clockToleranceSec }),
    ...(options.jwksCooldownMs === undefined ? {} : { jwksCooldownMs: options.jwksCooldownMs }),
  });
  const paths = metadataPaths(endpointPath);
  const seen = new Set<string>();

  const refuse = (
    challenge: Omit<Challenge, 'metadataUrl' | 'scope'>,
    status: number,
  ): Authentication => {
    const resource = resourceUrl();
    const metadataUrl = resource === undefined ? undefined : metadataUrlOf(resource);
    const header = bearerChallenge({ ...challenge, metadataUrl, scope: options.scope });
    const body =
      challenge.error === undefined
        ? {
            error: 'unauthorized',
            message: 'a bearer access token is required',
            resource_metadata: metadataUrl,
          }
        : {
            error: challenge.error,
            error_description: challenge.description,
            resource_metadata: metadataUrl,
          };
    return { ok: false, reply: json(status, body, { 'www-authenticate': header }) };
  };

  const judge = (token: string, check: TokenCheck): Authentication => {
    if (check.ok) {
      const { clientId, scopes, expiresAt } = check.token;
      const principal = authenticatedPrincipal(check.token.principal);
      if (logger !== undefined) noteCaller(seen, logger, principal, clientId);
      return {
        ok: true,
        principal,
        authInfo: authInfoFor(principal, token, { clientId, scopes, expiresAt }),
      };
    }
    if (check.error === 'unavailable') {
      logger?.warn('cannot verify bearer tokens', {
        issuer: verifier.issuer,
        reason: check.reason,
      });
      return {
        ok: false,
        reply: json(
          503,
          {
            error: 'auth_unavailable',
            message: 'the authorization server cannot be reached; retry later',
          },
          { 'retry-after': '5' },
        ),
      };
    }
    return refuse(
      { error: check.error, description: check.reason },
      check.error === 'insufficient_scope' ? 403 : 401,
    );
  };

  return {
    verifier,
    async authenticate(authorization) {
      const token = bearerOf(authorization);
      if (token === undefined) {
        const sent = authorization !== undefined && authorization !== '';
        return refuse(
          sent ? { error: 'invalid_token', description: 'not a Bearer token' } : {},
          401,
        );
      }
      return judge(token, await verifier.verify(token));
    },
    wellKnown(path) {
      const resource = resourceUrl();
      if (resource === undefined || !paths.includes(path)) return undefined;
      return json(200, resourceMetadata(resource, verifier.issuer, options.scope));
    },
  };
}
