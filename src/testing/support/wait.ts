/** What a probe returns while the condition does not hold yet. */
export type NotYet = undefined | null | false | 0 | 0n | '';

/**
 * Waiting on conditions with deadlines, never on fixed sleeps. `waitFor` polls `probe` until it
 * returns a truthy value (so `0`, `''` and `null` count as "not yet", as in an `if`), and
 * fails with `what` when the deadline passes. The resolved value is the truthy one.
 */
export async function waitFor<T>(
  what: string,
  probe: () => T | NotYet | Promise<T | NotYet>,
  { timeoutMs = 10_000, intervalMs = 10 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<Exclude<T, NotYet>> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value as Exclude<T, NotYet>;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const suffix = lastError === undefined ? '' : ` (last error: ${String(lastError)})`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${suffix}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
