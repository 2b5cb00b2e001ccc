import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { waitFor } from '../helpers/wait.js';
import { StdioHost } from './stdio-host.js';

const TOOLS = new URL('../fixtures/stdio-crash-tools.js', import.meta.url).pathname;
/**
 * The next process takes over a task whose lease holder is a dead process on this machine at
 * once (runtime/owner.ts); otherwise after the lease (15 s by default) expired.
 */
const LEASE_PATIENT = { timeoutMs: 60_000, intervalMs: 100 };

/**
 * VS Code restarts `taskrail serve --stdio` after it was killed (SIGKILL: no shutdown, no
 * hand-back) with 2025-11-25 tasks still running. The next process on the same SQLite file
 * takes them over by the runtime's crash rules: a retryable tool runs again, a `retry: false`
 * one fails "interrupted"; a new SDK 1.x client reads both outcomes through tasks/result.
 */
describe('serve --stdio: a 2025-11-25 task running when the process is killed (SIGKILL)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-stdio-2025-crash-'));
  const store = `sqlite:${join(dir, 'tasks.db')}`;
  const journal = join(dir, 'journal.log');
  const gate = join(dir, 'gate');
  const serveArgs = ['--tools', TOOLS];

  after(() => rmSync(dir, { recursive: true, force: true }));

  const runs = (): string[] =>
    existsSync(journal) ? readFileSync(journal, 'utf8').trim().split('\n') : [];

  it('the next serve --stdio re-runs the retryable task and fails the retry:false one', async () => {
    const first = await new StdioHost().start(store, serveArgs);
    const rerun = await first.createTask('journaled_gate', { journal, gate });
    const once = await first.createTask('journaled_once', { journal, gate });
    await waitFor(
      'both tools to run in the first process',
      () => runs().length === 2,
      LEASE_PATIENT,
    );
    await first.kill();

    const next = await new StdioHost().start(store, serveArgs);
    try {
      // Opened only once the next host is connected: a status change made before the host's
      // `notifications/initialized` is not pushed to it (it reads state with tasks/get), so the
      // re-run must end after that for the push asserted below to be owed.
      writeFileSync(gate, '');
      await next.until(rerun, 'completed', LEASE_PATIENT);
      await next.until(once, 'failed', LEASE_PATIENT);
      const result = await next.client.experimental.tasks.getTaskResult(
        rerun,
        CallToolResultSchema,
      );
      assert.deepEqual(result.content, [
        { type: 'text', text: 'journaled_gate passed the gate on attempt 2' },
      ]);
      await assert.rejects(
        next.client.experimental.tasks.getTaskResult(once, CallToolResultSchema),
        /interrupted.*not safe to re-run/,
      );
      assert.deepEqual(runs().sort(), [
        `journaled_gate ${rerun} 1`,
        `journaled_gate ${rerun} 2`,
        `journaled_once ${once} 1`,
      ]);
      await waitFor(
        'the next process to tell its host that the re-run task completed',
        () => next.statuses.some((s) => s.taskId === rerun && s.status === 'completed'),
        LEASE_PATIENT,
      );
    } finally {
      await next.close();
    }
  });
});
