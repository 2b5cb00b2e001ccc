import { TaskrailError } from '../../task/errors.js';

/** The parts of RFC 8414 / OpenID Connect discovery metadata a resource server uses. */
export interface IssuerMetadata {
  issuer: string;
  jwksUri: string;
}

const DISCOVERY_TIMEOUT_MS = 10_000;

/**
 * Where the issuer's metadata may live, in the order the MCP authorization spec tries them:
 * RFC 8414 inserts the well-known segment before the issuer's path; OpenID Connect appends
 * it (and is also tried inserted, as some providers serve it there).
 */
export function metadataUrls(issuer: string): URL[] {
  const url = new URL(issuer);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  const at = (wellKnown: string): URL => new URL(`${url.origin}${wellKnown}`);
  const urls = [at(`/.well-known/oauth-authorization-server${path}`)];
  if (path !== '') urls.push(at(`/.well-known/openid-configuration${path}`));
  urls.push(at(`${path}/.well-known/openid-configuration`));
  return urls;
}

/** Checks an `oauth:ISSUER_URL` value: an absolute http(s) URL without query or fragment. */
export function checkIssuerUrl(issuer: string): string {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new TaskrailError('CONFIG', `the issuer ${issuer} is not a URL (oauth:https://…)`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new TaskrailError('CONFIG', `the issuer ${issuer} must be an https:// URL`);
  }
  if (url.search !== '' || url.hash !== '') {
    throw new TaskrailError('CONFIG', `the issuer ${issuer} may not have a query or fragment`);
  }
  return issuer;
}

async function fetchJson(url: URL): Promise<unknown> {
  const response = await fetch(url, {
    headers: { accept: 'application/json' },
    signal: AbortSignal.timeout(DISCOVERY_TIMEOUT_MS),
  });
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`HTTP ${response.status}`);
  }
  return (await response.json()) as unknown;
}

function readMetadata(value: unknown, issuer: string, from: URL): IssuerMetadata {
  const doc = (value ?? {}) as Record<string, unknown>;
  if (doc['issuer'] !== issuer) {
    throw new TaskrailError(
      'CONFIG',
      `${from.href} names the issuer ${String(doc['issuer'])}, not ${issuer}: ` +
        'give --auth oauth: exactly the issuer your tokens carry in "iss"',
    );
  }
  const jwksUri = doc['jwks_uri'];
  if (typeof jwksUri !== 'string' || !URL.canParse(jwksUri)) {
    throw new TaskrailError('CONFIG', `${from.href} has no jwks_uri to verify tokens with`);
  }
  return { issuer, jwksUri };
}

/** Finds the issuer's metadata (RFC 8414, else OpenID configuration) and checks it names the issuer. */
export async function discoverIssuer(issuer: string): Promise<IssuerMetadata> {
  const failures: string[] = [];
  for (const url of metadataUrls(issuer)) {
    let value: unknown;
    try {
      value = await fetchJson(url);
    } catch (error) {
      failures.push(`${url.href}: ${(error as Error).message}`);
      continue;
    }
    return readMetadata(value, issuer, url);
  }
  throw new TaskrailError(
    'CONFIG',
    `cannot read the authorization server metadata of ${issuer} (${failures.join('; ')})`,
  );
}
