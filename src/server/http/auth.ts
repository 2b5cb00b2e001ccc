import { createHash, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { AuthInfo } from '@modelcontextprotocol/server';
import { TaskrailError } from '../../task/errors.js';
import {
  ANONYMOUS,
  authenticatedPrincipal,
  authInfoFor,
  ownAuthInfo,
  principalOfAuthInfo,
} from '../tasks/principal.js';

/** Bearer tokens → principal names (`{"s3cret-a": "alice"}`). */
export type TokenMap = Readonly<Record<string, string>>;

/** An HTTP answer made by the auth seam (401, 403, 503, or a metadata document). */
export interface AuthReply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type Authentication =
  { ok: true; principal: string; authInfo?: AuthInfo } | { ok: false; reply: AuthReply };

/** How callers of the MCP endpoint are identified: nobody, a token file, or OAuth. */
export interface CallerAuth {
  /**
   * `preset` is AuthInfo a host application's middleware put on the request (`req.auth`);
   * it counts only when taskrail itself authenticates nobody.
   */
  authenticate(
    authorization: string | undefined,
    preset?: AuthInfo,
  ): Authentication | Promise<Authentication>;
  /** An RFC 9728 document when `path` is one of its well-known paths. */
  wellKnown(path: string): AuthReply | undefined;
}

const JSON_HEADERS = { 'content-type': 'application/json' };

export function bearerOf(authorization: string | null | undefined): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
}

/** Without `--auth`: the host application's own AuthInfo if any, else anonymous. */
export const anonymousAuth: CallerAuth = {
  authenticate: (_authorization, preset) =>
    preset === undefined
      ? { ok: true, principal: ANONYMOUS }
      : { ok: true, principal: principalOfAuthInfo(preset), authInfo: ownAuthInfo(preset) },
  wellKnown: () => undefined,
};

const sha256 = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/**
 * Finds a secret among known ones without leaking, through timing, how much of it matched:
 * every candidate's digest is compared in constant time, and the loop never stops early.
 */
export class SecretTable<T> {
  readonly #entries: { digest: Buffer; value: T }[];

  constructor(entries: Iterable<[string, T]>) {
    this.#entries = [...entries].map(([secret, value]) => ({ digest: sha256(secret), value }));
  }

  find(secret: string | undefined): T | undefined {
    if (secret === undefined) return undefined;
    const digest = sha256(secret);
    let found: T | undefined;
    for (const entry of this.#entries) {
      if (timingSafeEqual(entry.digest, digest) && found === undefined) found = entry.value;
    }
    return found;
  }
}

const UNAUTHORIZED: AuthReply = {
  status: 401,
  headers: { ...JSON_HEADERS, 'www-authenticate': 'Bearer' },
  body: JSON.stringify({ error: 'unauthorized', message: 'a known bearer token is required' }),
};

/** `--auth tokens:FILE`: an unknown or missing bearer is refused. */
export function tokenAuth(tokens: TokenMap): CallerAuth {
  const table = new SecretTable(Object.entries(checkTokenMap(tokens)));
  return {
    authenticate(authorization) {
      const token = bearerOf(authorization);
      const name = table.find(token);
      if (token === undefined || name === undefined) return { ok: false, reply: UNAUTHORIZED };
      const principal = authenticatedPrincipal(name);
      return { ok: true, principal, authInfo: authInfoFor(principal, token) };
    },
    wellKnown: () => undefined,
  };
}

/** Reads a JSON file named on the command line, with errors that say which file and why. */
export async function readJsonFile(path: string, what: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new TaskrailError(
      'CONFIG',
      `cannot read the ${what} ${path}: ${(error as Error).message}`,
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new TaskrailError('CONFIG', `the ${what} ${path} is not valid JSON`);
  }
}

/** Reads and checks a token file: a JSON object of non-empty string → non-empty string. */
export async function loadTokenFile(path: string): Promise<TokenMap> {
  return checkTokenMap(await readJsonFile(path, 'token file'), path);
}

export function checkTokenMap(value: unknown, source = 'tokens'): TokenMap {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new TaskrailError(
      'CONFIG',
      `${source} must be a JSON object mapping tokens to principal names`,
    );
  }
  const entries = Object.entries(value as Record<string, unknown>);
  for (const [token, principal] of entries) {
    if (token === '' || typeof principal !== 'string' || principal === '') {
      throw new TaskrailError(
        'CONFIG',
        `${source}: every token must map to a non-empty principal name`,
      );
    }
  }
  return Object.freeze(Object.fromEntries(entries) as Record<string, string>);
}
