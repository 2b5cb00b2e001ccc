import type { createRemoteJWKSet, JWTPayload } from 'jose';
import { checkIssuerUrl, discoverIssuer, type IssuerMetadata } from './discovery.js';

type Jose = typeof import('jose');
let joseModule: Promise<Jose> | undefined;
/** jose is ~180 modules; a server without OAuth never loads them (resting memory). */
const jose = (): Promise<Jose> => (joseModule ??= import('jose'));

/** Asymmetric JWS algorithms only: `none` and HMAC (a key the client could know) never verify. */
export const ALLOWED_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
];

export interface OAuthVerifierOptions {
  /** The authorization server's issuer identifier, exactly as tokens carry it in `iss`. */
  issuer: string;
  /** The resource URL tokens must name in `aud` (RFC 8707); read when a token arrives. */
  resource: () => string | undefined;
  /** A scope every token must carry (space-separated `scope`, or `scp`). */
  scope?: string | undefined;
  /** Leeway for `exp`/`nbf`, in seconds. Default 30. */
  clockToleranceSec?: number;
  /** Least time between two JWKS fetches for an unknown `kid`. Default 30 s. */
  jwksCooldownMs?: number;
  /** Least time between two discovery attempts after one failed. Default 10 s. */
  discoveryRetryMs?: number;
}

/** A verified access token: who (`sub`), through which client, with which scopes. */
export interface VerifiedToken {
  principal: string;
  clientId: string | undefined;
  scopes: string[];
  expiresAt: number | undefined;
}

export type TokenCheck =
  | { ok: true; token: VerifiedToken }
  | { ok: false; error: 'invalid_token' | 'insufficient_scope' | 'unavailable'; reason: string };

type KeySet = ReturnType<typeof createRemoteJWKSet>;

function scopesOf(payload: JWTPayload): string[] {
  const { scope, scp } = payload as { scope?: unknown; scp?: unknown };
  if (typeof scope === 'string') return scope.split(' ').filter((s) => s !== '');
  if (Array.isArray(scp)) return scp.filter((s): s is string => typeof s === 'string');
  if (typeof scp === 'string') return scp.split(' ').filter((s) => s !== '');
  return [];
}

function clientIdOf(payload: JWTPayload): string | undefined {
  const { client_id: clientId, azp } = payload as { client_id?: unknown; azp?: unknown };
  if (typeof clientId === 'string') return clientId;
  return typeof azp === 'string' ? azp : undefined;
}

/** RFC 9068's media type; jose also takes it as `application/at+jwt`, in any case. */
const ACCESS_TOKEN_TYP = 'at+jwt';

function isWrongTyp(errors: Jose['errors'], error: unknown): boolean {
  return error instanceof errors.JWTClaimValidationFailed && error.claim === 'typ';
}

/** Says what the token's `typ` header was and what an access token's must be. */
function wrongTypReason(token: string): string {
  let typ: unknown;
  try {
    const header = token.split('.')[0] ?? '';
    typ = (JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as { typ?: unknown }).typ;
  } catch {
    typ = undefined;
  }
  const given = typeof typ === 'string' ? `"${typ}"` : 'missing';
  return `not an access token: its JWT "typ" header is ${given}, and an access token's must be "at+jwt" (RFC 9068); send the access token, not an ID token`;
}

/** A key-set fetch that timed out or failed is the server's trouble, not a bad token. */
function isUnavailable(errors: Jose['errors'], error: unknown): boolean {
  if (error instanceof errors.JWKSTimeout) return true;
  return !(error instanceof errors.JOSEError);
}

/**
 * Verifies JWT access tokens as an OAuth 2.1 resource server: keys from the issuer's
 * `jwks_uri` (found by discovery on first use, cached and refreshed by jose on an unknown
 * `kid` at most once per cooldown), `iss`, `aud`, `exp`/`nbf`, the algorithm and the scope.
 */
export class OAuthVerifier {
  readonly issuer: string;
  readonly scope: string | undefined;
  readonly #options: OAuthVerifierOptions;
  #keys: Promise<KeySet> | undefined;
  #failedAt = -Infinity;

  constructor(options: OAuthVerifierOptions) {
    this.issuer = checkIssuerUrl(options.issuer);
    this.scope = options.scope;
    this.#options = options;
  }

  /** Discovers the issuer now; rejects with an error that says what to fix. */
  async ready(): Promise<IssuerMetadata> {
    const metadata = await discoverIssuer(this.issuer);
    this.#keys ??= this.#keySet(metadata);
    return metadata;
  }

  async verify(token: string): Promise<TokenCheck> {
    const audience = this.#options.resource();
    if (audience === undefined) {
      return { ok: false, error: 'unavailable', reason: 'no resource URL is configured' };
    }
    let keys: KeySet;
    try {
      keys = await this.#keySetOnce();
    } catch (error) {
      return { ok: false, error: 'unavailable', reason: (error as Error).message };
    }
    const { errors, jwtVerify } = await jose();
    try {
      const { payload } = await jwtVerify(token, keys, {
        issuer: this.issuer,
        audience,
        algorithms: ALLOWED_ALGORITHMS,
        clockTolerance: this.#options.clockToleranceSec ?? 30,
        requiredClaims: ['sub', 'exp'],
        // RFC 9068: a JWT access token says so; an ID token or a logout token must not pass.
        typ: ACCESS_TOKEN_TYP,
      });
      return this.#accept(payload);
    } catch (error) {
      const reason = isWrongTyp(errors, error) ? wrongTypReason(token) : (error as Error).message;
      return {
        ok: false,
        error: isUnavailable(errors, error) ? 'unavailable' : 'invalid_token',
        reason,
      };
    }
  }

  #accept(payload: JWTPayload): TokenCheck {
    const scopes = scopesOf(payload);
    const principal = payload.sub;
    if (typeof principal !== 'string' || principal === '') {
      return { ok: false, error: 'invalid_token', reason: 'the token has no subject' };
    }
    if (this.scope !== undefined && !scopes.includes(this.scope)) {
      return { ok: false, error: 'insufficient_scope', reason: `scope ${this.scope} is required` };
    }
    const token = { principal, clientId: clientIdOf(payload), scopes, expiresAt: payload.exp };
    return { ok: true, token };
  }

  /** One discovery at a time; after a failure, the next attempt waits `discoveryRetryMs`. */
  #keySetOnce(): Promise<KeySet> {
    if (this.#keys !== undefined) return this.#keys;
    if (Date.now() - this.#failedAt < (this.#options.discoveryRetryMs ?? 10_000)) {
      return Promise.reject(new Error(`the metadata of ${this.issuer} could not be read lately`));
    }
    const keys = discoverIssuer(this.issuer).then((metadata) => this.#keySet(metadata));
    this.#keys = keys;
    keys.catch(() => {
      this.#keys = undefined;
      this.#failedAt = Date.now();
    });
    return keys;
  }

  async #keySet(metadata: IssuerMetadata): Promise<KeySet> {
    const { createRemoteJWKSet } = await jose();
    return createRemoteJWKSet(new URL(metadata.jwksUri), {
      cooldownDuration: this.#options.jwksCooldownMs ?? 30_000,
      cacheMaxAge: 10 * 60_000,
    });
  }
}
