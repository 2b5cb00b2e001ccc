import { randomBytes } from 'node:crypto';

/** 144 random bits from the CSPRNG, base64url: 24 URL-safe characters. */
export function newTaskId(): string {
  return randomBytes(18).toString('base64url');
}

export function newToken(): string {
  return randomBytes(16).toString('base64url');
}

const TASK_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

/** Ids arrive from the wire; anything that could not be one of ours is rejected early. */
export function isPlausibleTaskId(value: unknown): value is string {
  return typeof value === 'string' && TASK_ID_PATTERN.test(value);
}
