import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import { newTaskRecord, type TaskRecord } from '../../src/task/record.js';
import { complete } from '../../src/task/transitions.js';
import { runNode } from '../helpers/child.js';
import { waitFor } from '../helpers/wait.js';
import { startHarness, type Harness } from './harness.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

async function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const { code, stdout, stderr } = await runNode(MAIN, args);
  return { code: code ?? -1, stdout, stderr };
}

function record(id: string, principal: string, tool: string, createdAt: number): TaskRecord {
  return newTaskRecord(
    { id, principal, tool, arguments: { n: 1 }, ttlMs: 3_600_000, pollIntervalMs: 1000 },
    createdAt,
  );
}

describe('taskrail admin (on the store itself)', () => {
  let h: Harness;
  let url: string;
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-admin-cli-'));
  before(async () => {
    h = await startHarness({ admin: false });
    url = `sqlite:${join(dir, 'idle.db')}`;
    const now = Date.now();
    const writer = new SqliteTaskStore(join(dir, 'idle.db'));
    await writer.create(record('cli-task-alice-working-01', 'alice', 'report', now - 3000));
    const done = await writer.create(
      record('cli-task-bob-completed-02', 'bob', 'export', now - 2000),
    );
    await writer.compareAndSet(complete(done.task, { content: [] }, now), 1);
    const broken = await writer.create(
      record('cli-task-carol-toolerror-03', 'carol', 'export', now - 1000),
    );
    const isError = { content: [{ type: 'text', text: 'empty data set' }], isError: true };
    await writer.compareAndSet(complete(broken.task, isError, now), 1);
    await writer.close();
  });
  after(async () => {
    await h.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists tasks across principals, newest first, with filters', async () => {
    const all = await run(['admin', 'list', '--store', url]);
    assert.equal(all.code, 0, all.stderr);
    const [header, ...lines] = all.stdout.trim().split('\n');
    assert.deepEqual(header?.split(/\s+/), [
      'ID',
      'STATUS',
      'TOOL',
      'PRINCIPAL',
      'AGE',
      'ATTEMPT',
      'WAITING',
      'MESSAGE',
    ]);
    // Aligned: each column starts at the same place on every line.
    const starts = (line: string) => [...line.matchAll(/(?<=\s{3})\S/g)].map((m) => m.index);
    assert.deepEqual(starts(lines[0] ?? '').slice(0, 4), starts(header ?? '').slice(0, 4));
    assert.deepEqual(starts(lines[2] ?? '').slice(0, 4), starts(header ?? '').slice(0, 4));
    const ids = lines.map((line) => line.split(/\s+/)[0]);
    assert.deepEqual(ids, [
      'cli-task-carol-toolerror-03',
      'cli-task-bob-completed-02',
      'cli-task-alice-working-01',
    ]);
    assert.match(all.stdout, /^cli-task-carol-toolerror-03 +tool_error +export +carol /m);
    assert.match(all.stdout, /cli-task-alice-working-01 +working +report +alice +\d+s/);
    const bob = await run(['admin', 'list', '--principal', 'bob', '--store', url]);
    assert.match(bob.stdout, /^cli-task-bob-completed-02 /m);
    assert.equal(bob.stdout.trim().split('\n').length, 2);
    const working = await run([
      'admin',
      'list',
      '--status',
      'working',
      '--tool',
      'report',
      '--store',
      url,
      '--json',
    ]);
    const parsed = JSON.parse(working.stdout) as { id: string }[];
    assert.deepEqual(
      parsed.map((t) => t.id),
      ['cli-task-alice-working-01'],
    );
    const bad = await run(['admin', 'list', '--status', 'nope', '--store', url]);
    assert.equal(bad.code, 4);
    assert.match(bad.stderr, /tool_error/);
  });

  it('--status tool_error (or tool-error) lists tool errors apart from completed, as the dashboard does', async () => {
    const listed = async (status: string): Promise<string[]> => {
      const r = await run(['admin', 'list', '--status', status, '--store', url, '--json']);
      assert.equal(r.code, 0, r.stderr);
      return (JSON.parse(r.stdout) as { id: string; outcome: string }[]).map(
        (t) => `${t.id} ${t.outcome}`,
      );
    };
    assert.deepEqual(await listed('tool_error'), ['cli-task-carol-toolerror-03 tool_error']);
    assert.deepEqual(await listed('tool-error'), ['cli-task-carol-toolerror-03 tool_error']);
    assert.deepEqual(await listed('completed'), ['cli-task-bob-completed-02 completed']);
    assert.deepEqual(await listed('working,tool_error'), [
      'cli-task-carol-toolerror-03 tool_error',
      'cli-task-alice-working-01 working',
    ]);
    const limited = await run([
      'admin',
      'list',
      '--status',
      'completed,tool_error',
      '--limit',
      '1',
      '--store',
      url,
    ]);
    assert.equal(limited.stdout.trim().split('\n').length, 2, 'the header and one task');
  });

  it('shows a task as JSON', async () => {
    const shown = await run(['admin', 'show', 'cli-task-bob-completed-02', '--store', url]);
    assert.equal(shown.code, 0, shown.stderr);
    const task = JSON.parse(shown.stdout) as Record<string, unknown>;
    assert.equal(task['status'], 'completed');
    assert.equal(task['principal'], 'bob');
    assert.deepEqual(task['arguments'], { n: 1 });
    assert.equal(task['wire'], '2026-07-28');
    assert.equal(task['generation'], undefined);
    assert.match(String(task['createdAt']), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const missing = await run(['admin', 'show', 'no-such-task', '--store', url]);
    assert.equal(missing.code, 4);
    assert.match(missing.stderr, /not found/);
  });

  it('takes a unique id prefix for show and cancel, and refuses an ambiguous one', async () => {
    const shown = await run(['admin', 'show', 'cli-task-bob', '--store', url]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.equal((JSON.parse(shown.stdout) as { id: string }).id, 'cli-task-bob-completed-02');
    const ambiguous = await run(['admin', 'show', 'cli-task-', '--store', url]);
    assert.equal(ambiguous.code, 4);
    assert.match(ambiguous.stderr, /matches several tasks/);
    // Cancelling a completed task: nothing changes, and the exit code is the completed one.
    const done = await run(['admin', 'cancel', 'cli-task-bob', '--store', url]);
    assert.equal(done.code, 0, done.stderr);
    assert.match(done.stderr, /already completed/);
  });

  it('cancels a live task; the server running it stops the handler', async () => {
    const task = await h.create('gate', { key: 'cli' });
    await waitFor('it to run', async () =>
      (await h.store.get(task.id))?.statusMessage?.includes('gate'),
    );
    const served = `sqlite:${h.dbPath}`;
    const cancelled = await run(['admin', 'cancel', task.id.slice(0, 12), '--store', served]);
    assert.equal(cancelled.code, 3, cancelled.stderr);
    assert.match(cancelled.stdout, /cancelled/);
    const stored = await h.store.get(task.id);
    assert.equal(stored?.status, 'cancelled');
    assert.equal(stored?.statusMessage, 'Cancelled by an operator.');
    await waitFor('the handler to see its signal', () => h.aborted.has('cli'));
    const again = await run(['admin', 'cancel', task.id, '--store', served]);
    assert.equal(again.code, 3);
    assert.match(again.stderr, /already cancelled/);
  });
});
