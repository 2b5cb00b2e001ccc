import { InvalidArgumentError, type Command } from 'commander';

/** `--port`: an integer 0–65535 (0 picks a free port). */
export function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65_535)
    throw new InvalidArgumentError('must be an integer from 0 to 65535');
  return port;
}

const UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  kb: 1024,
  kib: 1024,
  mb: 1024 ** 2,
  mib: 1024 ** 2,
  gb: 1024 ** 3,
  gib: 1024 ** 3,
};

/** `--max-body`: bytes, or a size such as `512kb`, `4mb`, `1gb` (binary units). */
export function parseSize(value: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(value.trim());
  const unit = UNITS[(match?.[2] ?? '').toLowerCase()];
  if (match === null || unit === undefined)
    throw new InvalidArgumentError('must be a size such as 4mb, 512kb or 1048576');
  const bytes = Math.floor(Number(match[1]) * unit);
  if (bytes < 1) throw new InvalidArgumentError('must be at least 1 byte');
  return bytes;
}

/** `--auth tokens:FILE` → FILE. */
export function parseTokensSpec(value: string): string {
  if (!value.startsWith('tokens:') || value.length === 'tokens:'.length) {
    throw new InvalidArgumentError(
      'must be tokens:FILE (a JSON object mapping bearer tokens to principal names)',
    );
  }
  return value.slice('tokens:'.length);
}

/** `--auth` / `--admin`: a token file, or the issuer URL of an OAuth authorization server. */
export type AuthSpec = { kind: 'tokens'; file: string } | { kind: 'oauth'; issuer: string };

export function parseAuthSpec(value: string): AuthSpec {
  if (value.startsWith('oauth:')) {
    const issuer = value.slice('oauth:'.length);
    if (!URL.canParse(issuer) || !/^https?:$/.test(new URL(issuer).protocol)) {
      throw new InvalidArgumentError(
        'oauth: must be followed by the issuer URL, e.g. oauth:https://auth.example.com/realms/mcp',
      );
    }
    return { kind: 'oauth', issuer };
  }
  if (value.startsWith('tokens:') && value.length > 'tokens:'.length) {
    return { kind: 'tokens', file: value.slice('tokens:'.length) };
  }
  throw new InvalidArgumentError(
    'must be tokens:FILE (a JSON object mapping bearer tokens to names) or oauth:ISSUER_URL',
  );
}

/** `--resource`: an absolute URL without a fragment (RFC 8707). */
export function parseResourceUrl(value: string): string {
  if (!URL.canParse(value) || new URL(value).hash !== '') {
    throw new InvalidArgumentError('must be an absolute URL, e.g. https://mcp.example.com/mcp');
  }
  return value;
}

/** `--scope`, `--admin-scope`: one OAuth scope name (no spaces or quotes). */
export function parseScope(value: string): string {
  if (!/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(value)) {
    throw new InvalidArgumentError('must be one scope name, e.g. mcp:tools');
  }
  return value;
}

export function parseLogLevel(value: string): 'debug' | 'info' | 'warn' | 'error' | 'silent' {
  if (!['debug', 'info', 'warn', 'error', 'silent'].includes(value)) {
    throw new InvalidArgumentError('must be one of debug, info, warn, error, silent');
  }
  return value as 'debug' | 'info' | 'warn' | 'error' | 'silent';
}

/** A bearer token: the flag, else `TASKRAIL_BEARER`, else none (an empty value counts as none). */
export function bearerFrom(flag: string | undefined, env = process.env): string | undefined {
  const token = flag ?? env['TASKRAIL_BEARER'];
  return token === undefined || token.trim() === '' ? undefined : token.trim();
}

/** A whole number ≥ 1 (`--max-connections`, `--max-sessions`, …). */
export function parseCount(value: string): number {
  const count = Number(value);
  if (!/^\d+$/.test(value.trim()) || count < 1 || !Number.isSafeInteger(count))
    throw new InvalidArgumentError('must be a whole number of at least 1');
  return count;
}

/** Seconds, fractions allowed, as milliseconds (`--headers-timeout 10`, `0.5`). */
export function parseSeconds(value: string): number {
  const seconds = Number(value);
  if (value.trim() === '' || !Number.isFinite(seconds) || seconds <= 0 || seconds > 86_400)
    throw new InvalidArgumentError('must be a number of seconds from 0.001 to 86400');
  return Math.max(1, Math.round(seconds * 1000));
}

/** Minutes, fractions allowed, as milliseconds (`--session-idle 60`). */
export function parseMinutes(value: string): number {
  const minutes = Number(value);
  if (value.trim() === '' || !Number.isFinite(minutes) || minutes <= 0 || minutes > 10_080)
    throw new InvalidArgumentError('must be a number of minutes from 0.001 to 10080 (a week)');
  return Math.max(1, Math.round(minutes * 60_000));
}

export function parseLogFormat(value: string): 'text' | 'json' {
  if (value !== 'text' && value !== 'json') throw new InvalidArgumentError('must be text or json');
  return value;
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000 };

/**
 * `--inline-wait`: `45s`, `1500ms`, `2m`, or a bare number of seconds; at most 10 minutes.
 * Hand-written like parseSize: three units and a clear message need no dependency.
 */
export function parseDuration(value: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m)?$/i.exec(value.trim());
  const unit = DURATION_UNITS[(match?.[2] ?? 's').toLowerCase()];
  if (match === null || unit === undefined) {
    throw new InvalidArgumentError('must be a duration such as 45s, 1500ms or 2m');
  }
  const ms = Math.round(Number(match[1]) * unit);
  if (ms > 600_000) throw new InvalidArgumentError('must be at most 10m');
  return ms;
}

/** The smallest `--max-result-chars`: the line that says how to read the rest must fit. */
export const MIN_RESULT_CHARS = 1000;

/** `--max-result-chars`: a whole number of characters, at least `MIN_RESULT_CHARS`. */
export function parseResultChars(value: string): number {
  const count = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(count) || count < MIN_RESULT_CHARS)
    throw new InvalidArgumentError(
      `must be a whole number of characters, at least ${MIN_RESULT_CHARS} (default 40000)`,
    );
  return count;
}

/** `--max-read-chars`: a whole number of characters, at least `MIN_RESULT_CHARS`. */
export function parseReadChars(value: string): number {
  const count = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(count) || count < MIN_RESULT_CHARS)
    throw new InvalidArgumentError(
      `must be a whole number of characters, at least ${MIN_RESULT_CHARS} (default 8388608)`,
    );
  return count;
}

/** The connection flags of every command that talks to a server. */
export interface ConnectionFlags {
  bearer?: string;
  header?: string[];
}

/** What a client needs to reach a server as the user asked: the bearer and extra headers. */
export interface Connection {
  bearer?: string;
  headers?: Record<string, string>;
}

/** Adds `--bearer` and `--header` (the same on `call`, `tools` and every `tasks` subcommand). */
export function addConnectionOptions(command: Command): Command {
  return command
    .option('--bearer <token>', 'send Authorization: Bearer <token> (default: $TASKRAIL_BEARER)')
    .option(
      '--header <name: value>',
      "send this HTTP header with every request (repeatable), e.g. --header 'X-Team: blue'",
      collectHeader,
      [],
    );
}

function collectHeader(value: string, previous: string[]): string[] {
  const colon = value.indexOf(':');
  const name = colon < 0 ? '' : value.slice(0, colon).trim();
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) || value.slice(colon + 1).trim() === '') {
    throw new InvalidArgumentError("must be 'Name: value', e.g. --header 'X-Team: blue'");
  }
  return [...previous, value];
}

/**
 * The connection for a command: `--bearer`, else `$TASKRAIL_BEARER`, else `saved` (the token a
 * task was created with: a fresh one from the flag or the environment beats it, as OAuth
 * tokens expire), and the `--header`s.
 */
export function connectionOf(flags: ConnectionFlags, saved?: string): Connection {
  const bearer = bearerFrom(flags.bearer) ?? saved;
  const headers = Object.fromEntries(
    (flags.header ?? []).map((line) => {
      const colon = line.indexOf(':');
      return [line.slice(0, colon).trim(), line.slice(colon + 1).trim()];
    }),
  );
  return {
    ...(bearer === undefined ? {} : { bearer }),
    ...(Object.keys(headers).length === 0 ? {} : { headers }),
  };
}
