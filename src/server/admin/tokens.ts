import { TaskrailError } from '../../task/errors.js';
import { readJsonFile } from '../http/auth.js';

/** One operator: the name shown in logs and cancel messages, and whether it may answer input. */
export interface AdminOperator {
  name: string;
  canAnswer: boolean;
  /** Token operators always may; an OAuth operator needs the admin write scope. */
  canCancel: boolean;
}

/**
 * An admin token file entry: `"token": "ops"` (view and cancel), or
 * `"token": { "name": "ops", "canAnswer": true }` (also answer parked tasks' input).
 */
export type AdminTokenEntry = string | { name: string; canAnswer?: boolean };

export type AdminTokenMap = Readonly<Record<string, AdminOperator>>;

function operatorOf(entry: unknown, source: string): AdminOperator {
  if (typeof entry === 'string' && entry !== '')
    return { name: entry, canAnswer: false, canCancel: true };
  if (entry !== null && typeof entry === 'object' && !Array.isArray(entry)) {
    const { name, canAnswer } = entry as Record<string, unknown>;
    if (
      typeof name === 'string' &&
      name !== '' &&
      (canAnswer === undefined || typeof canAnswer === 'boolean')
    ) {
      return { name, canAnswer: canAnswer === true, canCancel: true };
    }
  }
  throw new TaskrailError(
    'CONFIG',
    `${source}: every admin token must map to a name or to {"name": "...", "canAnswer": true|false}`,
  );
}

/** Checks admin tokens; a token that is also a caller token is refused, so the two never mix. */
export function checkAdminTokens(
  value: unknown,
  callerTokens: Readonly<Record<string, string>> | undefined,
  source = 'admin tokens',
): AdminTokenMap {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new TaskrailError(
      'CONFIG',
      `${source} must be a JSON object mapping tokens to operators`,
    );
  }
  const operators: Record<string, AdminOperator> = {};
  for (const [token, entry] of Object.entries(value as Record<string, unknown>)) {
    if (token === '') throw new TaskrailError('CONFIG', `${source}: a token is empty`);
    if (callerTokens !== undefined && Object.hasOwn(callerTokens, token)) {
      throw new TaskrailError('CONFIG', `${source}: a token is also a caller (--auth) token`);
    }
    operators[token] = operatorOf(entry, source);
  }
  if (Object.keys(operators).length === 0) {
    throw new TaskrailError('CONFIG', `${source}: no admin token is defined`);
  }
  return Object.freeze(operators);
}

/** Reads an admin token file (same JSON shape as `--auth`, plus the object form). */
export async function loadAdminTokenFile(path: string): Promise<Record<string, AdminTokenEntry>> {
  const value = await readJsonFile(path, 'admin token file');
  checkAdminTokens(value, undefined, path);
  return value as Record<string, AdminTokenEntry>;
}
