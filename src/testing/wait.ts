/**
 * Waiting on conditions with deadlines, never on fixed sleeps. `waitFor` polls `probe` until it
 * returns a value that is not undefined/false, and fails with `what` when the deadline passes.
 */
export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  { timeoutMs = 10_000, intervalMs = 10 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value as T;
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
