/**
 * The proxy's overhead: a 10 ms upstream call (server-everything's long-running operation with
 * duration 0.01 s, one step) made as a task through `taskrail proxy` and seen completed, beside
 * the same call made directly on the upstream with the official SDK client, in the same run.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Ledger, TaskrailClient } from '../src/client/index.js';
import { checked, endpoint, MAIN, wire2026, pause, type Endpoint } from './lib/http.js';
import { median, percentile, report, spread } from './lib/stats.js';
import { startNode } from '../test/helpers/child.js';
import { freePort } from '../test/helpers/ports.js';
import { startServing } from '../test/helpers/taskrail.js';

const EVERYTHING = 'node_modules/@modelcontextprotocol/server-everything/dist/index.js';
const TOOL = 'trigger-long-running-operation';
const ARGS = { duration: 0.01, steps: 1 };
const ROUNDS = 3;
const PER_ROUND = 40;

/** Milliseconds from tools/call until a tasks/get (every 2 ms) reads `completed`. */
async function polled(ep: Endpoint): Promise<number> {
  const begin = performance.now();
  const created = await checked(ep, wire2026('tools/call', { name: TOOL, arguments: ARGS }, true));
  const get = wire2026('tasks/get', { taskId: String(created['taskId']) }, true);
  for (;;) {
    await pause(2);
    const task = await checked(ep, get);
    if (task['status'] === 'completed') return performance.now() - begin;
    if (task['status'] !== 'working') throw new Error(`task ended ${String(task['status'])}`);
  }
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const begin = performance.now();
  await run();
  return performance.now() - begin;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-bench-proxy-'));
  const port = await freePort();
  const upstream = startNode(EVERYTHING, ['streamableHttp'], { PORT: String(port) });
  await upstream.line(new RegExp(`listening on port ${port}\\b`), 60_000, 'stderr');
  const upstreamUrl = `http://127.0.0.1:${port}/mcp`;
  const proxyArgs = ['proxy', '--port', '0', '--store', `sqlite:${join(dir, 'tasks.db')}`];
  proxyArgs.push('--upstream', upstreamUrl, '--log-level', 'warn');
  const proxy = await startServing(proxyArgs, { main: MAIN, stdin: 'ignore', timeoutMs: 60_000 });
  const proxyUrl = proxy.url;
  const direct = new Client({ name: 'bench', version: '1.0.0' });
  await direct.connect(new StreamableHTTPClientTransport(new URL(upstreamUrl)));
  const ep = endpoint(proxyUrl);
  const host = new TaskrailClient({ url: proxyUrl, ledger: Ledger.open(dir) });
  const samples = { direct: [] as number[], polled: [] as number[], client: [] as number[] };
  const ratios: number[] = [];
  try {
    await polled(ep); // warm: upstream session in the proxy's pool, tools/list in the client
    await host.callTool(TOOL, ARGS, { background: false });
    for (let round = 0; round < ROUNDS; round += 1) {
      const roundDirect: number[] = [];
      const roundPolled: number[] = [];
      for (let i = 0; i < PER_ROUND; i += 1) {
        roundDirect.push(await timed(() => direct.callTool({ name: TOOL, arguments: ARGS })));
        roundPolled.push(await polled(ep));
        samples.client.push(await timed(() => host.callTool(TOOL, ARGS, { background: false })));
      }
      samples.direct.push(...roundDirect);
      samples.polled.push(...roundPolled);
      ratios.push(median(roundPolled) / median(roundDirect));
    }
  } finally {
    host.close();
    ep.close();
    await direct.close();
    await Promise.all([proxy.child.kill('SIGTERM'), upstream.kill('SIGKILL')]);
    rmSync(dir, { recursive: true, force: true });
  }
  const base = median(samples.direct);
  const row = (label: string, values: number[]) => [
    label,
    `${median(values).toFixed(2)} / ${percentile(values, 99).toFixed(2)}`,
    `${(median(values) - base).toFixed(2)}`,
    `${(median(values) / base).toFixed(2)}×`,
  ];
  const ratio = median(ratios);
  report({
    title: 'Proxy overhead on a 10 ms upstream call',
    description: `server-everything (npm, Streamable HTTP) runs a 10 ms operation. Direct: the SDK v1 client calls it. Through \`taskrail proxy\` (SQLite store): the call is created as a task and seen completed, by tasks/get every 2 ms, and by taskrail's own client (push). ${ROUNDS} rounds × ${PER_ROUND} calls, interleaved; per-round ratio spread ${spread(ratios)}.`,
    columns: ['path', 'p50 / p99 ms', 'p50 minus direct, ms', 'p50 ÷ direct'],
    rows: [
      row('direct upstream call', samples.direct),
      row('proxy, task seen by tasks/get', samples.polled),
      row('proxy, taskrail client (push)', samples.client),
    ],
    goals: [
      {
        text: `a task through the proxy is seen completed within 3× the direct call's time (median of rounds ${ratio.toFixed(2)}×)`,
        met: ratio <= 3,
      },
    ],
  });
}

await main();
