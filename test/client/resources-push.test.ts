import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as z from 'zod/v4';
import { Ledger, TaskrailClient } from '../../src/client/index.js';
import { startServer, type Running } from '../wire-2025/fixture.js';
import { countingProxy, type Front } from '../wire-2025/only-2025-proxy.js';
import { waitFor } from '../helpers/wait.js';
import { spawnCli, tempDir } from './support.js';

const LINES = 3;
const Gate = z.object({ gate: z.string() });
type Counts = Map<string, number>;
const count = (counts: Counts, method: string): number => counts.get(method) ?? 0;

/** A fetch that counts the JSON-RPC methods (and standalone-stream GETs) it sends. */
function countingFetch(counts: Counts): typeof fetch {
  return (input, init) => {
    const body = typeof init?.body === 'string' ? init.body : undefined;
    const method =
      body === undefined ? init?.method : (JSON.parse(body) as { method?: string }).method;
    if (method !== undefined) counts.set(method, count(counts, method) + 1);
    return fetch(input, init);
  };
}

/**
 * Following a task's output on a server that pushes resource updates (both wires): the first
 * read once the subscription is confirmed, then a read only when an update says the output grew.
 * Each idle wait below lasts about half a second, counted in `tasks/get`s: two of the
 * follower's safety net (one every five poll intervals of 50 ms), or on 2025-11-25, where the
 * call's own watcher polls `tasks/get` every 50 ms, ten. A poller would have read meanwhile.
 */
describe('following output reads only what an update announces', () => {
  let server: Running;

  before(async () => {
    server = await startServer();
    server.app.tool(
      'emit_lines',
      {
        description: 'Writes a line of output as each of its gates opens',
        inputSchema: Gate,
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
    server.app.tool(
      'quiet',
      {
        description: 'Waits on its gate and writes no output',
        inputSchema: Gate,
        task: { mode: 'optional', pollIntervalMs: 50 },
      },
      async (args, ctx) => {
        await server.gates.wait(String(args['gate']), ctx.signal);
        return { content: [{ type: 'text', text: 'quiet done' }] };
      },
    );
  });
  after(() => server.close());

  for (const wire of ['2026-07-28', '2025-11-25'] as const) {
    const front = (): Promise<Front & { counts: Counts }> =>
      countingProxy(server.url, { only2025: wire === '2025-11-25' });
    const idleChecks = wire === '2025-11-25' ? 10 : 2;
    /** Waits until the follower idled (see above), or read more than `reads`. */
    const idle = (counts: Counts, what: string, reads: number) => {
      const checks = count(counts, 'tasks/get');
      return waitFor(
        what,
        () =>
          count(counts, 'tasks/get') >= checks + idleChecks ||
          count(counts, 'resources/read') > reads,
        { timeoutMs: 20_000 },
      );
    };

    it(`${wire}: followOutput is pushed — one read first, then one per line at most`, async () => {
      const proxy = await front();
      const home = tempDir(`resources-push-${wire}`);
      const counts: Counts = new Map();
      // One client: an anonymous 2025-11-25 task's resources are its session's alone.
      const client = new TaskrailClient({
        url: proxy.url,
        ledger: Ledger.open(home.path),
        fetch: countingFetch(counts),
      });
      const gate = `push-${wire}`;
      try {
        const call = await client.callTool('emit_lines', { gate });
        const seen: string[] = [];
        const following = (async () => {
          for await (const chunk of client.resources.followOutput(call.taskId ?? ''))
            seen.push(chunk);
        })();
        await waitFor('the first read', () => count(counts, 'resources/read') >= 1, {
          timeoutMs: 20_000,
        });
        await idle(counts, 'the follower idling before any output', LINES + 1);
        for (let i = 0; i < LINES; i++) {
          server.gates.open(`${gate}-${i}`);
          await waitFor(`line ${i}`, () => seen.join('').includes(`line ${i}\n`), {
            timeoutMs: 20_000,
          });
          // After the last line the task ends, and so does the following.
          if (i < LINES - 1) await idle(counts, `the follower idling after line ${i}`, LINES + 1);
        }
        await following;
        assert.equal(seen.join(''), 'line 0\nline 1\nline 2\n');
        const subscribe = wire === '2026-07-28' ? 'subscriptions/listen' : 'resources/subscribe';
        assert.ok(count(counts, subscribe) >= 1, `followed through ${subscribe}`);
        assert.ok(
          count(counts, 'resources/read') <= LINES + 1,
          `${count(counts, 'resources/read')} reads for ${LINES} lines`,
        );
      } finally {
        client.close();
        await proxy.close();
        home.remove();
      }
    });

    it(`${wire}: taskrail call of a tool that writes no output reads its output once`, async () => {
      const proxy = await front();
      const home = tempDir(`resources-quiet-${wire}`);
      const gate = `quiet-${wire}`;
      try {
        const child = spawnCli(
          ['call', proxy.url, 'quiet', '--args', JSON.stringify({ gate })],
          home.path,
        );
        await waitFor('the first read', () => count(proxy.counts, 'resources/read') >= 1, {
          timeoutMs: 20_000,
        }).catch((error: Error) => {
          const asked = JSON.stringify([...proxy.counts]);
          throw new Error(`${error.message}; asked ${asked}; stderr: ${child.stderr()}`);
        });
        await idle(proxy.counts, 'the call idling while its task runs', 1);
        server.gates.open(gate);
        await child.exited;
        assert.equal(child.process.exitCode, 0);
        assert.ok(child.lines.includes('quiet done'));
        assert.equal(count(proxy.counts, 'resources/read'), 1);
      } finally {
        await proxy.close();
        home.remove();
      }
    });
  }
});
