import { createHash } from 'node:crypto';

/**
 * Who a bearer token speaks for, as far as the host can tell without asking the server: a JWT's
 * issuer and subject (a refreshed OAuth token is the same caller), else a digest of the token.
 * Read without verifying, and only compared with another token's identity on this machine.
 */
export function credentialIdentity(bearer: string | undefined): string {
  if (bearer === undefined || bearer === '') return 'anonymous';
  const claims = jwtClaims(bearer);
  if (typeof claims?.['iss'] === 'string' && typeof claims['sub'] === 'string') {
    return `jwt ${claims['iss']} ${claims['sub']}`;
  }
  return `sha256 ${createHash('sha256').update(bearer).digest('hex')}`;
}

/**
 * True when `used` speaks for the same caller as `created` (the token a task was created with).
 * Only then does a server's "not found" mean the task is gone: the server gives another
 * principal the same "not found" as a task that never existed.
 */
export function sameCaller(created: string | undefined, used: string | undefined): boolean {
  return credentialIdentity(created) === credentialIdentity(used);
}

function jwtClaims(token: string): Record<string, unknown> | undefined {
  const parts = token.split('.');
  if (parts.length !== 3 || parts[1] === undefined) return undefined;
  try {
    const claims: unknown = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    return claims !== null && typeof claims === 'object'
      ? (claims as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
