import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as z from 'zod/v4';
import {
  Ledger,
  TaskrailClient,
  isShortened,
  taskResourceUri,
  type CallToolResult,
} from '../../src/client/index.js';
import { startServer, type Running } from '../wire-2025/fixture.js';
import { only2025Proxy } from '../wire-2025/only-2025-proxy.js';
import { waitFor } from '../helpers/wait.js';
import { runCli, spawnCli, tempDir } from './support.js';

/** 400,000 characters with a mark every 100 of them, so any slice shows where it came from. */
const BIG = Array.from(
  { length: 4000 },
  (_, i) => `${String(i).padStart(6, '0')}${'😀'.repeat(2)}${'x'.repeat(90)}\n`,
).join('');
const LINES = 3;

describe('results of any size and output while running, from the host side', () => {
  const dir = tempDir('resources-live');
  let server: Running;
  let proxy: { url: string; close(): Promise<void> };

  before(async () => {
    server = await startServer();
    server.app.tool(
      'big_text',
      { description: 'A 400,000-character report', task: { mode: 'optional', pollIntervalMs: 50 } },
      () => ({ content: [{ type: 'text', text: BIG }] }),
    );
    server.app.tool(
      'emit_lines',
      {
        description: 'Writes a line of output as each of its gates opens',
        inputSchema: z.object({ gate: z.string() }),
        task: { mode: 'optional', pollIntervalMs: 50 },
      },
      async (args, ctx) => {
        for (let i = 0; i < LINES; i++) {
          await server.gates.wait(`${String(args['gate'])}-${i}`, ctx.signal);
          await ctx.output(`line ${i}\n`);
        }
        return { content: [{ type: 'text', text: 'emitted' }] };
      },
    );
    proxy = await only2025Proxy(server.url);
  });
  after(async () => {
    await proxy.close();
    await server.close();
    dir.remove();
  });

  for (const wire of ['2026-07-28', '2025-11-25'] as const) {
    const urlOf = () => (wire === '2026-07-28' ? server.url : proxy.url);
    const open = (home: string) =>
      new TaskrailClient({ url: urlOf(), ledger: Ledger.open(home), defaultPollIntervalMs: 50 });

    it(`${wire}: reads a shortened result whole, and an exact slice of it`, async () => {
      const home = tempDir(`resources-whole-${wire}`);
      const client = open(home.path);
      try {
        const call = await client.callTool('big_text', {}, { background: false });
        const outcome = call.outcome;
        assert.equal(outcome?.kind, 'completed');
        const result = (outcome as { result: CallToolResult }).result;
        assert.equal(isShortened(result), true);
        assert.ok(JSON.stringify(result.content).length < 50_000);
        const whole = await client.resources.wholeResult(result);
        assert.deepEqual(whole.content, [{ type: 'text', text: BIG }]);
        const uri = taskResourceUri(call.taskId ?? '', 'result');
        assert.equal(
          await client.resources.read(uri, { offset: BIG.length - 2000, length: 2000 }),
          BIG.slice(-2000),
        );
        assert.equal(
          await client.resources.readWhole(uri, { offset: 399_000 }),
          BIG.slice(399_000),
        );
      } finally {
        client.close();
        home.remove();
      }
    });

    it(`${wire}: follows a task's output while it runs, each line once, and ends with the task`, async () => {
      const home = tempDir(`resources-follow-${wire}`);
      const client = open(home.path);
      const gate = `follow-${wire}`;
      try {
        const call = await client.callTool('emit_lines', { gate });
        const seen: string[] = [];
        const following = (async () => {
          for await (const chunk of client.resources.followOutput(call.taskId ?? ''))
            seen.push(chunk);
        })();
        for (let i = 0; i < LINES; i++) {
          server.gates.open(`${gate}-${i}`);
          // The line arrives while the task still waits at its next gate: live, not at the end.
          await waitFor(
            `line ${i}`,
            () => (seen.join('').includes(`line ${i}\n`) ? true : undefined),
            {
              timeoutMs: 20_000,
            },
          );
        }
        await following;
        assert.equal(seen.join(''), 'line 0\nline 1\nline 2\n');
        assert.equal((await call.result()).kind, 'completed');
      } finally {
        client.close();
        home.remove();
      }
    });
  }

  it('taskrail call prints the output as it grows, then a shortened result whole; tasks output prints it again', async () => {
    const home = tempDir('resources-cli');
    const gate = 'cli';
    try {
      const child = spawnCli(
        ['call', server.url, 'emit_lines', '--args', JSON.stringify({ gate })],
        home.path,
      );
      server.gates.open(`${gate}-0`);
      await child.line(/^line 0$/, 20_000);
      assert.equal(child.lines.includes('emitted'), false);
      server.gates.open(`${gate}-1`);
      server.gates.open(`${gate}-2`);
      await child.exited;
      assert.deepEqual(
        child.lines.filter((l) => l !== ''),
        ['line 0', 'line 1', 'line 2', 'emitted'],
      );
      const id = Ledger.open(home.path).list()[0]?.id ?? '';
      const again = await runCli(['tasks', 'output', id.slice(0, 12)], home.path);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(again.stdout, 'line 0\nline 1\nline 2\n');
      const followed = await runCli(['tasks', 'output', id, '--follow'], home.path);
      assert.equal(followed.stdout, 'line 0\nline 1\nline 2\n');

      const big = await runCli(['call', server.url, 'big_text'], home.path);
      assert.equal(big.code, 0, big.stderr);
      assert.equal(big.stdout, BIG);
      const json = await runCli(['call', server.url, 'big_text', '--json'], home.path);
      const given = JSON.parse(json.stdout) as CallToolResult;
      assert.equal(isShortened(given), true);

      const unknown = await runCli(['tasks', 'output', 'no-such-task'], home.path);
      assert.equal(unknown.code, 4);
      assert.match(unknown.stderr, /no task 'no-such-task' in the ledger/);
    } finally {
      home.remove();
    }
  });
});
