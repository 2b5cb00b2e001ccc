import { readFile } from 'node:fs/promises';
import type { AuthInfo } from '@modelcontextprotocol/server';
import { TaskrailError } from '../task/errors.js';
import { ANONYMOUS, authInfoFor } from './principal.js';

/** Bearer tokens → principal names (`{"s3cret-a": "alice"}`). */
export type TokenMap = Readonly<Record<string, string>>;

export type Authentication = { ok: true; principal: string; authInfo?: AuthInfo } | { ok: false };

/** Without tokens every caller is anonymous; with them, an unknown or missing bearer is refused. */
export function authenticate(
  tokens: TokenMap | undefined,
  authorization: string | undefined,
): Authentication {
  if (tokens === undefined) return { ok: true, principal: ANONYMOUS };
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  const token = match?.[1];
  if (token === undefined || !Object.hasOwn(tokens, token)) return { ok: false };
  const principal = tokens[token] as string;
  return { ok: true, principal, authInfo: authInfoFor(principal, token) };
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
