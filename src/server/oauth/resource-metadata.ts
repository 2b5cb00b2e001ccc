const WELL_KNOWN = '/.well-known/oauth-protected-resource';

/** The two RFC 9728 paths a server with endpoint `path` (e.g. `/mcp`) answers. */
export function metadataPaths(path: string): string[] {
  return [WELL_KNOWN, `${WELL_KNOWN}${path}`];
}

/** The metadata URL of a resource: the well-known segment inserted before its path (RFC 9728 §3.1). */
export function metadataUrlOf(resource: string): string {
  const url = new URL(resource);
  const path = url.pathname === '/' ? '' : url.pathname;
  return `${url.origin}${WELL_KNOWN}${path}`;
}

export interface ResourceMetadata {
  resource: string;
  authorization_servers: string[];
  scopes_supported?: string[];
  bearer_methods_supported: string[];
  resource_name: string;
}

export function resourceMetadata(
  resource: string,
  issuer: string,
  scope: string | undefined,
): ResourceMetadata {
  return {
    resource,
    authorization_servers: [issuer],
    ...(scope === undefined ? {} : { scopes_supported: [scope] }),
    bearer_methods_supported: ['header'],
    resource_name: 'taskrail',
  };
}

/** Quotes an auth-param value (RFC 9110 quoted-string). */
function quoted(value: string): string {
  return `"${value.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

export interface Challenge {
  metadataUrl?: string | undefined;
  realm?: string | undefined;
  error?: 'invalid_token' | 'insufficient_scope' | undefined;
  description?: string | undefined;
  scope?: string | undefined;
}

/** A `WWW-Authenticate: Bearer …` value (RFC 6750 §3, RFC 9728 §5.1). */
export function bearerChallenge(challenge: Challenge): string {
  const params: string[] = [];
  if (challenge.realm !== undefined) params.push(`realm=${quoted(challenge.realm)}`);
  if (challenge.metadataUrl !== undefined) {
    params.push(`resource_metadata=${quoted(challenge.metadataUrl)}`);
  }
  if (challenge.error !== undefined) params.push(`error=${quoted(challenge.error)}`);
  if (challenge.description !== undefined) {
    // Header values must stay printable ASCII.
    const ascii = challenge.description.replace(/[^\x20-\x7e]/g, '?').slice(0, 200);
    params.push(`error_description=${quoted(ascii)}`);
  }
  if (challenge.scope !== undefined) params.push(`scope=${quoted(challenge.scope)}`);
  return params.length === 0 ? 'Bearer' : `Bearer ${params.join(', ')}`;
}
