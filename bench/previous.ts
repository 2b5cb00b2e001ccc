/**
 * The guard against the previous round: `taskrail serve` of this build and of each previous
 * main named in docs/benchmarks.md (built in worktrees of their own, bench/lib/previous-build.ts),
 * each on its own SQLite file, driven with the same calls in interleaved rounds: the 2026-07-28
 * create, `tasks/get` and synchronous `tools/call`, and the same three on a 2025-11-25 session
 * (their answers are SSE frames, read and checked for a result like the JSON ones). Prints one
 * JSON line (see scripts/bench.mjs).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BENCH_TOOLS, endpoint, MAIN, startServer, wire2026, type Call } from './lib/http.js';
import type { ChildServer } from './lib/http.js';
import { driveEach, rawRequest, type LoadResult } from './lib/load.js';
import { compare, loadRow } from './lib/load-rows.js';
import { taskrailCompletedTaskGet, v1CompletedTaskGet, v1Session } from './lib/peers.js';
import { buildOf, previousMains } from './lib/previous-build.js';
import { report } from './lib/stats.js';

const ROUNDS = Number(process.env['TASKRAIL_BENCH_ROUNDS'] ?? 5);
const SLICE_MS = 1000;
const WARM_UP_MS = 2000;
const CONNECTIONS = 32;
/** The measures the round's goal is judged on (≥ 1.0× every previous main, req/s and CPU). */
const GOAL_MEASURES = ['create', 'tasks/get', 'synchronous tools/call'].map((m) => `${m} (2026)`);

const builds: { name: string; main: string }[] = [
  { name: 'this build', main: MAIN },
  ...previousMains()
    .map(buildOf)
    .map((b) => ({ name: b.commit.slice(0, 7), main: b.main })),
];
/**
 * On a quiet machine a build creates no-op tasks faster than its 16 slots run them, so a create
 * measure's backlog passes the default cap (10,000 unfinished per caller) within seconds and the
 * rest is refused. Every build that has the cap gets the same higher one: it is still judged in
 * every creating write, and the builds before it have none.
 */
const CAP = ['--max-queued-per-principal', '1000000'];
function capArgs(main: string): string[] {
  const help = execFileSync(process.execPath, [main, 'serve', '--help'], { encoding: 'utf8' });
  return help.includes(CAP[0] as string) ? CAP : [];
}
const dir = mkdtempSync(join(tmpdir(), 'taskrail-bench-previous-'));
const servers: ChildServer[] = [];
for (const [i, build] of builds.entries()) {
  const store = `sqlite:${join(dir, `build-${i}.db`)}`;
  const args = ['serve', '--port', '0', '--tools', BENCH_TOOLS, '--log-level', 'warn'];
  servers.push(await startServer(build.main, [...args, ...capArgs(build.main), '--store', store]));
}

const noop = (tasks: boolean) => wire2026('tools/call', { name: 'noop', arguments: {} }, tasks);
/** The calls measured, built against one server (task ids and sessions are per server). */
async function callsFor(server: ChildServer): Promise<Record<string, Call>> {
  const ep = endpoint(server.url);
  const session = await v1Session(ep);
  const calls = {
    'create (2026)': noop(true),
    'tasks/get (2026)': await taskrailCompletedTaskGet(ep),
    'synchronous tools/call (2026)': noop(false),
    'create (2025-11-25 session)': session('tools/call', {
      name: 'noop',
      arguments: {},
      task: { ttl: 3_600_000 },
    }),
    'tasks/get (2025-11-25 session)': await v1CompletedTaskGet(ep, session),
    'synchronous tools/call (2025-11-25 session)': session('tools/call', {
      name: 'noop',
      arguments: {},
    }),
  };
  ep.close();
  return calls;
}
/**
 * One request per connection: a session answers by JSON-RPC id, so its requests in flight
 * need ids of their own (the sessionless wire does not mind; they get them too).
 */
function perConnection(url: string, call: Call): Buffer[] {
  const message = JSON.parse(call.body) as object;
  return Array.from({ length: CONNECTIONS }, (_, i) =>
    rawRequest(url, { ...call, body: JSON.stringify({ ...message, id: i + 1 }) }),
  );
}
const calls = await Promise.all(servers.map(callsFor));
const measures = Object.keys(calls[0] as object);
const requests = servers.map((server, b) =>
  Object.fromEntries(
    measures.map((m) => [
      m,
      perConnection(server.url, (calls[b] as Record<string, Call>)[m] as Call),
    ]),
  ),
);
const drives = (b: number, measure: string, ms: number) => () => {
  const server = servers[b] as ChildServer;
  const bytes = (requests[b] as Record<string, Buffer[]>)[measure] as Buffer[];
  const next = (connection: number) => bytes[connection] as Buffer;
  return driveEach(server.url, next, server.process.pid as number, CONNECTIONS, ms, true);
};

for (const measure of measures) {
  for (const b of builds.keys()) await drives(b, measure, WARM_UP_MS)();
}
const runs = builds.map(() => new Map(measures.map((m) => [m, [] as LoadResult[]])));
for (let round = 0; round < ROUNDS; round += 1) {
  // Each build goes first in some round; the order turns round every other round.
  const shift = round % builds.length;
  const turned = [...builds.keys()].map((i) => (i + shift) % builds.length);
  const order = round % 2 === 0 ? turned : turned.reverse();
  for (const measure of measures) {
    for (const b of order) runs[b]?.get(measure)?.push(await drives(b, measure, SLICE_MS)());
  }
}
await Promise.all(servers.map((s) => s.stop()));
rmSync(dir, { recursive: true, force: true });

const rows: string[][] = [];
const goals: { text: string; met: boolean }[] = [];
const of = (b: number, measure: string) => runs[b]?.get(measure) as LoadResult[];
for (const measure of measures) {
  rows.push(loadRow(`${measure}, this build`, of(0, measure)));
  for (let b = 1; b < builds.length; b += 1) {
    const name = (builds[b] as { name: string }).name;
    const c = compare(of(0, measure), of(b, measure));
    rows.push(loadRow(`${measure}, main \`${name}\``, of(b, measure), c, `this / \`${name}\``));
    if (!GOAL_MEASURES.includes(measure)) continue;
    const met = c.median >= 1 && c.cpu >= 1;
    goals.push({
      met,
      text: `${measure}: this build ≥ 1.0× main \`${name}\` (req/s ${c.text}, server CPU per request ${c.cpu.toFixed(2)}×; fails if either is below 1.0)`,
    });
  }
}

const names = builds.slice(1).map((b) => `\`${b.name}\``);
report({
  title: 'The guard: this build against the previous mains, same run',
  description:
    `\`taskrail serve\` of this build and of the mains ${names.join(' and ')} (named on the "Previous mains" line at the top of this page; each built by its own \`npm run build\` in a git worktree under the OS temp folder, node_modules hard-linked when package-lock.json is the same), each on its own SQLite file with the bench tools (a no-op, \`task: optional\`), default options (fair share, queue cap, fencing, big results, run policy all as shipped). ` +
    `The raw-socket generator of bench/lib/load.ts drives each with ${CONNECTIONS} keep-alive connections: 2 s unmeasured per build and measure, then ${ROUNDS} rounds of ${SLICE_MS} ms, the builds interleaved (each first in some round, the order reversed every other round). ` +
    'create = a no-op created as a task (its run counted with it: the generator waits for the server to go quiet after each slice); tasks/get = a completed task; synchronous = the no-op without the tasks extension. The 2026-07-28 calls are sessionless JSON; the 2025-11-25 ones go through one initialized session (`tools/call` with `task: { ttl }`), answered as SSE frames. Every reply is read to its end and must hold a JSON-RPC result. ' +
    'Server CPU per request: schedstat of the server process (all threads). Ratios: this / main for req/s, main / this for CPU (above 1 = this build spends less), medians of the per-round ratios (min–max).',
  columns: [
    'measure and build (32 connections)',
    'req/s (min–max)',
    'server CPU µs/req (min–max)',
    'against',
    'ratio of req/s (min–max)',
    'ratio of server CPU per request (main / this)',
  ],
  rows,
  goals,
});
