import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  exportJWK,
  exportSPKI,
  generateKeyPair,
  SignJWT,
  type CryptoKey,
  type JWK,
  type JWTPayload,
} from 'jose';

/** One signing key of the test authorization server. */
export interface TestKey {
  kid: string;
  alg: 'RS256' | 'ES256';
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  jwk: JWK;
}

export async function makeKey(kid: string, alg: 'RS256' | 'ES256'): Promise<TestKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, alg, privateKey, publicKey, jwk };
}

export interface TokenClaims {
  sub?: string;
  aud?: string | string[];
  iss?: string;
  scope?: string;
  client_id?: string;
  /** Seconds from now; negative = already expired. Default 300. */
  expiresIn?: number;
  notBefore?: number;
  /** The JWT `typ` header; null leaves it out. Default `at+jwt` (RFC 9068). */
  typ?: string | null;
}

/**
 * A loopback OAuth authorization server for tests: RFC 8414 metadata under an issuer with a
 * path (so the path-insertion rule is exercised), a JWKS whose keys can be rotated, and
 * JWT access tokens signed with any key, published or not.
 */
export class TestAuthServer {
  readonly keys: TestKey[] = [];
  jwksFetches = 0;
  #server: Server | undefined;
  #base = '';

  get issuer(): string {
    return `${this.#base}/tenant`;
  }

  async start(...keys: TestKey[]): Promise<this> {
    this.keys.push(...keys);
    this.#server = createServer((req, res) => {
      const send = (status: number, body: unknown): void => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.url === '/.well-known/oauth-authorization-server/tenant') {
        return send(200, {
          issuer: this.issuer,
          jwks_uri: `${this.#base}/tenant/jwks`,
          token_endpoint: `${this.#base}/tenant/token`,
          response_types_supported: ['code'],
        });
      }
      if (req.url === '/tenant/jwks') {
        this.jwksFetches += 1;
        return send(200, { keys: this.keys.map((key) => key.jwk) });
      }
      send(404, { error: 'not_found' });
    });
    await new Promise<void>((resolve) => this.#server?.listen(0, '127.0.0.1', resolve));
    this.#base = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  /** Publishes another key (a rotation), without restarting anything. */
  publish(key: TestKey): void {
    this.keys.push(key);
  }

  async token(key: TestKey, claims: TokenClaims, audience: string): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const payload: JWTPayload = {
      scope: claims.scope,
      client_id: claims.client_id ?? 'test-client',
    };
    const jwt = new SignJWT(payload)
      .setProtectedHeader({
        alg: key.alg,
        kid: key.kid,
        ...(claims.typ === null ? {} : { typ: claims.typ ?? 'at+jwt' }),
      })
      .setIssuer(claims.iss ?? this.issuer)
      .setSubject(claims.sub ?? 'alice')
      .setAudience(claims.aud ?? audience)
      .setIssuedAt(now)
      .setExpirationTime(now + (claims.expiresIn ?? 300));
    if (claims.notBefore !== undefined) jwt.setNotBefore(now + claims.notBefore);
    return jwt.sign(key.privateKey);
  }

  /** An unsigned token (`alg: none`) with otherwise valid claims. */
  unsigned(sub: string, audience: string): string {
    const now = Math.floor(Date.now() / 1000);
    const encode = (value: object): string =>
      Buffer.from(JSON.stringify(value)).toString('base64url');
    const header = encode({ alg: 'none', typ: 'JWT' });
    const body = encode({ iss: this.issuer, sub, aud: audience, iat: now, exp: now + 300 });
    return `${header}.${body}.`;
  }

  /** The classic key-confusion forgery: HS256 keyed with the RSA public key's PEM text. */
  async hmacWithPublicKey(key: TestKey, sub: string, audience: string): Promise<string> {
    const secret = new TextEncoder().encode(await exportSPKI(key.publicKey));
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({})
      .setProtectedHeader({ alg: 'HS256', kid: key.kid })
      .setIssuer(this.issuer)
      .setSubject(sub)
      .setAudience(audience)
      .setIssuedAt(now)
      .setExpirationTime(now + 300)
      .sign(secret);
  }

  async close(): Promise<void> {
    const server = this.#server;
    if (server === undefined) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
}
