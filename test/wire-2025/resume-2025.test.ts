import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as z from 'zod/v4';
import { Ledger, TaskrailClient, type LedgerEntry } from '../../src/client/index.js';
import { Session2025 } from '../../src/client/session-2025.js';
import { runCli, spawnCli, tempDir } from '../client/support.js';
import type { Child } from '../helpers/child.js';
import { waitFor } from '../helpers/wait.js';
import { startServer, type Running } from './fixture.js';
import { only2025Proxy } from './only-2025-proxy.js';

/**
 * A task created on the 2025-11-25 wire by a process that then dies (kill -9) is collected by a
 * later process from the ledger: it opens its own session and reads `tasks/get`/`tasks/result`.
 * The tool counts its runs: resuming must not run it again.
 */
describe('resuming a 2025-11-25 task from the ledger in a later process', () => {
  const dir = tempDir('resume-2025');
  let server: Running;
  let proxy: { url: string; close(): Promise<void> };
  const runs = new Map<string, number>();

  before(async () => {
    server = await startServer();
    server.app.tool(
      'counted_gate',
      {
        description: 'Counts its runs, then waits for a gate',
        inputSchema: z.object({ gate: z.string() }),
        task: { mode: 'optional', pollIntervalMs: 50 },
      },
      async (args, ctx) => {
        const gate = String(args['gate']);
        runs.set(gate, (runs.get(gate) ?? 0) + 1);
        await server.gates.wait(gate, ctx.signal);
        return { content: [{ type: 'text', text: `gate ${gate} opened` }] };
      },
    );
    proxy = await only2025Proxy(server.url);
  });
  after(async () => {
    await proxy.close();
    await server.close();
    dir.remove();
  });

  /** `taskrail call` in a child process, killed with SIGKILL once its task runs. */
  async function callThenKill(home: string, gate: string): Promise<LedgerEntry> {
    const child: Child = spawnCli(
      ['call', proxy.url, 'counted_gate', '--args', JSON.stringify({ gate })],
      home,
    );
    const ledger = Ledger.open(home);
    try {
      const entry = await waitFor('the task in the ledger', () => ledger.list()[0], {
        timeoutMs: 30_000,
      });
      await waitFor('the tool to run', () => runs.get(gate) === 1, { timeoutMs: 30_000 });
      await child.kill('SIGKILL');
      assert.equal(child.process.signalCode, 'SIGKILL');
      const left = ledger.require(entry.id);
      assert.equal(left.status, 'working');
      assert.equal(left.protocolVersion, '2025-11-25', 'recorded as a 2025-11-25 task');
      return left;
    } finally {
      ledger.close();
    }
  }

  it('taskrail tasks resume collects it once the tool ends; the tool ran once', async () => {
    const home = join(dir.path, 'cli');
    const entry = await callThenKill(home, 'cli');
    const listed = await runCli(['tasks', 'list', '--json'], home);
    assert.equal(listed.code, 0, listed.stderr);
    const [row] = JSON.parse(listed.stdout) as { id: string; status: string; live: boolean }[];
    assert.deepEqual(row && [row.id, row.status, row.live], [entry.id, 'working', true]);
    const resume = spawnCli(['tasks', 'resume', '--all'], home);
    const ledger = Ledger.open(home);
    try {
      // The second process follows the task before the tool ends: it must wait for its result.
      await waitFor(
        'the resuming process to follow the task',
        () => ledger.require(entry.id).ownerPid === resume.process.pid,
        { timeoutMs: 30_000 },
      );
      server.gates.open('cli');
      const line = await resume.line(new RegExp(`^${entry.id} `), 30_000);
      assert.match(line.input ?? '', new RegExp(`^${entry.id} completed counted_gate`));
      await resume.kill('SIGTERM');
      const done = ledger.require(entry.id);
      assert.equal(done.status, 'completed');
      assert.equal(done.outcome, 'completed');
      assert.match(JSON.stringify(done.result), /gate cli opened/);
      assert.equal(runs.get('cli'), 1, 'the tool ran once');
      const again = await runCli(['tasks', 'resume', '--all'], home);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(again.stdout, '', 'nothing left to resume');
    } finally {
      ledger.close();
    }
  });

  it('TaskrailClient.resume() in another process opens a session and gets the result', async () => {
    const home = join(dir.path, 'library');
    const entry = await callThenKill(home, 'library');
    const ledger = Ledger.open(home);
    const client = new TaskrailClient({ url: proxy.url, ledger, defaultPollIntervalMs: 50 });
    try {
      const [call, ...others] = await client.resume();
      assert.equal(others.length, 0);
      assert.equal(call?.taskId, entry.id);
      assert.throws(() => client.answerTask(entry.id), /2025-11-25 wire.*tasks wait/);
      server.gates.open('library');
      const outcome = await call.result();
      assert.equal(outcome.kind, 'completed', JSON.stringify(outcome));
      assert.match(JSON.stringify(outcome), /gate library opened/);
      assert.equal(ledger.require(entry.id).status, 'completed');
      assert.equal(runs.get('library'), 1, 'the tool ran once');
      const settled = await client.attach(entry.id);
      assert.equal((await settled.result()).kind, 'completed', 'a final entry answers at once');
      const answered = await client.answerTask(entry.id);
      assert.equal(answered.outcome?.kind, 'completed', 'an ended task has nothing to answer');
    } finally {
      client.close();
      ledger.close();
    }
  });

  it('taskrail tasks cancel in another process cancels it (exit 3); the tool ran once', async () => {
    const home = join(dir.path, 'cancel');
    const entry = await callThenKill(home, 'cancel');
    const cancelled = await runCli(['tasks', 'cancel', entry.id.slice(0, 8)], home);
    assert.equal(cancelled.code, 3, cancelled.stderr);
    assert.match(cancelled.stdout, new RegExp(`^${entry.id} cancelled$`, 'm'));
    const ledger = Ledger.open(home);
    assert.equal(ledger.require(entry.id).status, 'cancelled');
    ledger.close();
    const stored = await server.app.runtime.getTask(entry.id, 'anonymous');
    assert.equal(stored?.status, 'cancelled');
    assert.equal(runs.get('cancel'), 1);
  });

  it('a session the server no longer knows (404) is reopened, and its task still found', async () => {
    const session = await Session2025.open({
      url: proxy.url,
      clientInfo: { name: 'resume-test', version: '1.0.0' },
      capabilities: { tasks: { cancel: {} } },
    });
    const created = await session.request('tools/call', {
      name: 'counted_gate',
      arguments: { gate: 'session' },
      task: {},
    });
    assert.equal(created.kind, 'result', JSON.stringify(created));
    const taskId = String((created.result['task'] as { taskId: string }).taskId);
    await session.close(); // the server forgets the session; the object still holds its id
    const state = await session.request('tasks/get', { taskId });
    assert.equal(state.kind, 'result', JSON.stringify(state));
    assert.equal(state.result['taskId'], taskId);
    server.gates.open('session');
    const result = await session.request('tasks/result', { taskId }, { timeoutMs: 0 });
    assert.match(JSON.stringify(result), /gate session opened/);
    assert.equal(runs.get('session'), 1);
    await session.close();
  });
});
