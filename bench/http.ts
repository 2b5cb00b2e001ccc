/**
 * taskrail over HTTP next to its baselines, all measured in this run and interleaved round by
 * round: a bare node:http ceiling, a bare SDK v2 server, SDK v1 experimental tasks, and
 * `taskrail serve` on SQLite. Every server is a child process; this process is the load
 * generator (keep-alive sockets). Prints one JSON line (see scripts/bench.mjs).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import {
  BENCH_TOOLS,
  checked,
  endpoint,
  latencies,
  MAIN,
  modern,
  pause,
  rate,
  ratio,
  rounds,
  SERVERS,
  startServer,
  type Endpoint,
} from './_http.js';
import { clientLatency, e2eLatency, e2eRow } from './_e2e.js';
import { sender, taskrailCompletedTaskGet, v1CompletedTaskGet } from './_peers.js';
import { median, report, spread, type Section } from './_stats.js';

const ROUNDS = 5;
const SLICE_MS = 800;
const LATENCY_N = 150;
const E2E_N = 150;
const dir = mkdtempSync(join(tmpdir(), 'taskrail-bench-http-'));
const dbPath = join(dir, 'tasks.db');

const bare = await startServer(SERVERS, ['bare']);
const v2 = await startServer(SERVERS, ['sdk-v2']);
const v1 = await startServer(SERVERS, ['sdk-v1']);
const serveArgs = ['serve', '--port', '0', '--tools', BENCH_TOOLS, '--log-level', 'warn'];
const tr = await startServer(MAIN, [...serveArgs, '--store', `sqlite:${dbPath}`]);
await pause(2000);
const restRss = { taskrail: tr.rssMiB(), v2: v2.rssMiB() };

const ep = {
  bare: endpoint(bare.url),
  v2: endpoint(v2.url),
  v1: endpoint(v1.url),
  tr: endpoint(tr.url),
};
const noop = (tasks: boolean) => modern('tools/call', { name: 'noop', arguments: {} }, tasks);
const send = {
  bare: sender(ep.bare, noop(false)),
  v2Sync: sender(ep.v2, noop(false)),
  trSync: sender(ep.tr, noop(false)),
  trCreate: sender(ep.tr, noop(true)),
  trGet: sender(ep.tr, await taskrailCompletedTaskGet(ep.tr)),
  v1Get: sender(ep.v1, await v1CompletedTaskGet(ep.v1)),
};
for (const warm of Object.values(send)) await rate(warm, 8, 400);

/** Of `count` fresh task creations, how many were in the SQLite file when the reply arrived. */
async function committedBeforeReply(target: Endpoint, count: number): Promise<number> {
  const db = new Database(dbPath, { readonly: true });
  const find = db.prepare('SELECT 1 FROM tasks WHERE id = ?');
  let found = 0;
  for (let i = 0; i < count; i += 1) {
    const created = await checked(target, noop(true));
    if (find.get(String(created['taskId'])) !== undefined) found += 1;
  }
  db.close();
  return found;
}

const medianLatency = (fn: () => Promise<void>) => async () =>
  median(await latencies(fn, LATENCY_N));
const lat = await rounds(ROUNDS, {
  sync: medianLatency(send.trSync),
  create: medianLatency(send.trCreate),
});
const committed = await committedBeforeReply(ep.tr, 50);

const rateAt = (fn: () => Promise<void>, c: number) => () => rate(fn, c, SLICE_MS);
const get1 = await rounds(ROUNDS, {
  bare: rateAt(send.bare, 1),
  v1: rateAt(send.v1Get, 1),
  tr: rateAt(send.trGet, 1),
});
const get32 = await rounds(ROUNDS, {
  bare: rateAt(send.bare, 32),
  v1: rateAt(send.v1Get, 32),
  tr: rateAt(send.trGet, 32),
});
const sync1 = await rounds(ROUNDS, { v2: rateAt(send.v2Sync, 1), tr: rateAt(send.trSync, 1) });
const sync32 = await rounds(ROUNDS, { v2: rateAt(send.v2Sync, 32), tr: rateAt(send.trSync, 32) });
const e2e = await e2eLatency(ep.tr, E2E_N);
const viaClient = await clientLatency(tr.url, E2E_N);
const loadedRss = { taskrail: tr.rssMiB(), v2: v2.rssMiB() };

for (const e of Object.values(ep)) e.close();
await Promise.all([bare, v2, v1, tr].map((s) => s.stop()));
rmSync(dir, { recursive: true, force: true });

const ms = (values: number[]) => `${median(values).toFixed(3)} (${spread(values, 3)})`;
const rps = (values: number[]) => `${Math.round(median(values))} (${spread(values, 0)})`;
const x = (r: { median: number; spread: string }) => `${r.median.toFixed(2)}× (${r.spread})`;
const createRatio = ratio(lat.create, lat.sync);
const r = {
  get1Bare: ratio(get1.tr, get1.bare),
  get32Bare: ratio(get32.tr, get32.bare),
  get1V1: ratio(get1.tr, get1.v1),
  get32V1: ratio(get32.tr, get32.v1),
  sync1: ratio(sync1.tr, sync1.v2),
  sync32: ratio(sync32.tr, sync32.v2),
};
const e2eP50 = median(e2e.taskrail);
const clientP50 = median(viaClient.taskrail);
const rssGap = restRss.taskrail - restRss.v2;

const section: Section = {
  title: 'HTTP: taskrail serve next to bare node:http, SDK v2 and SDK v1 tasks',
  description:
    'Servers run as child processes on 127.0.0.1; this process drives them over keep-alive sockets. ' +
    `${ROUNDS} interleaved rounds; each cell is the median of the rounds (min–max). Latency rounds: ${LATENCY_N} sequential calls; ` +
    `throughput rounds: ${SLICE_MS} ms at the given concurrency. taskrail: \`taskrail serve\` on SQLite with a no-op tool (\`task: optional\`), ` +
    'called without the tasks extension (synchronous) or with it (a task). SDK v1: one stateful session, experimental tasks on ' +
    `its InMemoryTaskStore, tasks/get of a completed task. End to end: a 10 ms tool created as a task, ${E2E_N} runs one after another, seen completed by a bare loop polling at its pollIntervalMs (1 ms), and by taskrail's client as a host runs it (SQLite ledger written before the first poll, the outcome pushed over \`subscriptions/listen\` with polling behind it).`,
  columns: ['measure', 'taskrail', 'baseline', 'ratio (min–max)'],
  rows: [
    [
      'tools/call latency ms: create a task vs synchronous no-op (same server)',
      ms(lat.create),
      ms(lat.sync),
      x(createRatio),
    ],
    [
      'tasks/get req/s, concurrency 1 vs bare node:http',
      rps(get1.tr),
      rps(get1.bare),
      x(r.get1Bare),
    ],
    [
      'tasks/get req/s, concurrency 32 vs bare node:http',
      rps(get32.tr),
      rps(get32.bare),
      x(r.get32Bare),
    ],
    ['tasks/get req/s, concurrency 1 vs SDK v1 tasks/get', rps(get1.tr), rps(get1.v1), x(r.get1V1)],
    [
      'tasks/get req/s, concurrency 32 vs SDK v1 tasks/get',
      rps(get32.tr),
      rps(get32.v1),
      x(r.get32V1),
    ],
    [
      'synchronous tools/call req/s, concurrency 1 vs bare SDK v2',
      rps(sync1.tr),
      rps(sync1.v2),
      x(r.sync1),
    ],
    [
      'synchronous tools/call req/s, concurrency 32 vs bare SDK v2',
      rps(sync32.tr),
      rps(sync32.v2),
      x(r.sync32),
    ],
    e2eRow('10 ms tool seen completed by a polling client, ms p50 / p99 (SQLite)', e2e),
    e2eRow(
      "10 ms tool seen completed by taskrail's client (ledger, push), ms p50 / p99 (SQLite)",
      viaClient,
    ),
    [
      'RSS at rest after start, MiB',
      restRss.taskrail.toFixed(1),
      `${restRss.v2.toFixed(1)} (bare SDK v2)`,
      `+${rssGap.toFixed(1)} MiB`,
    ],
    [
      'RSS after the load above, MiB',
      loadedRss.taskrail.toFixed(1),
      `${loadedRss.v2.toFixed(1)} (bare SDK v2)`,
      `+${(loadedRss.taskrail - loadedRss.v2).toFixed(1)} MiB`,
    ],
  ],
  goals: [
    {
      text: `creating a task costs ≤ 1.3× a synchronous no-op call (${createRatio.median.toFixed(2)}×), committed before the reply (${committed}/50 rows in the file when the reply arrived)`,
      met: createRatio.median <= 1.3 && committed === 50,
    },
    {
      text: `tasks/get at concurrency 32 ≥ 40% of the bare node:http ceiling (${(r.get32Bare.median * 100).toFixed(0)}%)`,
      met: r.get32Bare.median >= 0.4,
    },
    {
      text: `tasks/get ≥ 2× SDK v1's in-memory tasks/get (concurrency 1: ${r.get1V1.median.toFixed(2)}×, 32: ${r.get32V1.median.toFixed(2)}×)`,
      met: r.get1V1.median >= 2 && r.get32V1.median >= 2,
    },
    {
      text: `a synchronous tools/call through taskrail ≥ 0.95× a bare SDK v2 server (concurrency 1: ${r.sync1.median.toFixed(2)}×, 32: ${r.sync32.median.toFixed(2)}×)`,
      met: r.sync1.median >= 0.95 && r.sync32.median >= 0.95,
    },
    {
      text:
        `a 10 ms tool is seen completed within 13 ms p50 on SQLite by taskrail's client ` +
        `(${clientP50.toFixed(2)} ms; a bare loop polling every 1 ms: ${e2eP50.toFixed(2)} ms)`,
      met: clientP50 <= 13,
    },
    {
      text: `resting RSS of serve within 15 MiB of a bare SDK v2 server (+${rssGap.toFixed(1)} MiB)`,
      met: rssGap <= 15,
    },
  ],
};
report(section);
process.exit(0);
