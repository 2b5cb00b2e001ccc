/**
 * Tools for the fair-share benchmark (`--tools .build/bench/lib/fair-tools.js`): a no-op and a
 * 10 ms tool, each twice, with and without a per-principal concurrency limit. Both servers of
 * the benchmark load this file, so both build the same four schemas once.
 */
import type { TaskServer } from '../../src/server/app.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const KEYED = { limit: 1000, key: 'principal' as const };

export default function register(app: TaskServer): void {
  for (const keyed of [false, true]) {
    const suffix = keyed ? '_keyed' : '';
    const task = {
      mode: 'optional' as const,
      pollIntervalMs: 1,
      ...(keyed ? { concurrency: KEYED } : {}),
    };
    app.tool(`noop${suffix}`, { description: 'does nothing', task }, () => ({ content: [] }));
    app.tool(`ten_ms${suffix}`, { description: 'waits 10 ms', task }, async () => {
      await sleep(10);
      return { content: [] };
    });
  }
}
