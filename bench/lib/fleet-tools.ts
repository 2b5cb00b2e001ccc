/**
 * The tool of the fleet fair-share benchmark (`--tools .build/bench/lib/fleet-tools.js`): waits
 * `ms`, then appends one byte to $TASKRAIL_BENCH_JOURNAL, so the benchmark counts finished runs
 * by the file's size without asking the server.
 */
import { appendFileSync } from 'node:fs';
import type { TaskServer } from '../../src/server/app.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export default function register(app: TaskServer): void {
  const journal = process.env['TASKRAIL_BENCH_JOURNAL'] ?? '/dev/null';
  const task = { mode: 'optional' as const };
  app.tool('work', { description: 'waits ms', task }, async (args) => {
    await sleep(Number(args['ms'] ?? 0));
    appendFileSync(journal, '.');
    return { content: [] };
  });
}
