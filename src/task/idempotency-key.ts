/** What an idempotency key may be: the server and the client check the same rule. */
const KEY_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

export const IDEMPOTENCY_KEY_RULE = '1–128 characters of A–Z, a–z, 0–9, ".", "_", ":" or "-"';

export function isIdempotencyKey(value: unknown): value is string {
  return typeof value === 'string' && KEY_PATTERN.test(value);
}
