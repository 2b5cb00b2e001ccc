/**
 * The run policy's cost on SQLite: create and tasks/get throughput, and the end to end of a
 * 10 ms tool, with the queue cap on and a tool of `concurrency: { limit: 1000, key:
 * 'principal' }` against the same tool without concurrency and the cap effectively off. Fair
 * share has no switch (it is always on), so both sides run it. Two `serve` children built
 * alike (same tools file, same slots, same principals, same load), measured in interleaved
 * rounds. Prints one JSON line (see scripts/bench.mjs).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seenCompleted } from './lib/e2e.js';
import { checked, endpoint, MAIN, pause, startServer, wire2026, type Call } from './lib/http.js';
import { driveEach, processCpuNs, rawRequest, type LoadResult } from './lib/load.js';
import { compare, loadRow, type Comparison } from './lib/load-rows.js';
import { median, percentile, report, spread } from './lib/stats.js';

const PRINCIPALS = 8;
const ROUNDS = 5;
const SLICE_MS = 1000;
const WARM_UP_MS = 2000;
const CONNECTIONS = 32;
const E2E_RUNS = 30;
const TOOLS = '.build/bench/lib/fair-tools.js';
/** "Effectively off": a cap no principal reaches (the store still judges it in each create). */
const NO_CAP = String(Number.MAX_SAFE_INTEGER);

/** on: cap and key; cap: the cap alone (the key's share is on against cap); off: neither. */
type Side = 'on' | 'cap' | 'off';
const SIDES: Side[] = ['on', 'cap', 'off'];
const suffix: Record<Side, string> = { on: '_keyed', cap: '', off: '' };

const dir = mkdtempSync(join(tmpdir(), 'taskrail-bench-fair-'));
const tokens = Object.fromEntries(
  Array.from({ length: PRINCIPALS }, (_, i) => [`token-${i}`, `principal-${i}`]),
);
writeFileSync(join(dir, 'tokens.json'), JSON.stringify(tokens));
const bearers = Object.keys(tokens).map((token) => ({ authorization: `Bearer ${token}` }));
const common = ['serve', '--port', '0', '--tools', TOOLS, '--log-level', 'warn'];
const auth = ['--auth', `tokens:${join(dir, 'tokens.json')}`];
const servers = {
  on: await startServer(MAIN, [...common, ...auth, '--store', `sqlite:${join(dir, 'on.db')}`]),
  cap: await startServer(MAIN, [...common, ...auth, '--store', `sqlite:${join(dir, 'cap.db')}`]),
  off: await startServer(MAIN, [
    ...common,
    ...auth,
    '--store',
    `sqlite:${join(dir, 'off.db')}`,
    '--max-queued-per-principal',
    NO_CAP,
  ]),
};
const eps = {
  on: endpoint(servers.on.url),
  cap: endpoint(servers.cap.url),
  off: endpoint(servers.off.url),
};
const pid = (side: Side) => servers[side].process.pid as number;
const signed = (call: Call, i: number): Call => ({
  ...call,
  headers: { ...call.headers, ...bearers[i] },
});

/** Requests of every principal in turn, built once. */
function rotating(side: Side, calls: Call[]): () => Buffer {
  const bytes = calls.map((call) => rawRequest(servers[side].url, call));
  let next = 0;
  return () => bytes[(next += 1) % bytes.length] as Buffer;
}

/** A tasks/get of a completed task of principal `i`, created through the measured tool. */
async function completedGet(side: Side, i: number): Promise<Call> {
  const create = wire2026('tools/call', { name: `noop${suffix[side]}`, arguments: {} }, true);
  const created = await checked(eps[side], signed(create, i));
  const get = signed(wire2026('tasks/get', { taskId: String(created['taskId']) }, true), i);
  for (let tries = 0; tries < 1000; tries += 1) {
    if ((await checked(eps[side], get))['status'] === 'completed') return get;
    await pause(5);
  }
  throw new Error(`a ${side} task did not complete`);
}

const each = <T>(make: (i: number) => T): T[] =>
  Array.from({ length: PRINCIPALS }, (_, i) => make(i));
const loads = {} as Record<string, () => Promise<LoadResult>>;
for (const side of SIDES) {
  const create = wire2026('tools/call', { name: `noop${suffix[side]}`, arguments: {} }, true);
  const creates = rotating(
    side,
    each((i) => signed(create, i)),
  );
  const gets = rotating(side, await Promise.all(each((i) => completedGet(side, i))));
  loads[`create-${side}`] = () =>
    driveEach(servers[side].url, creates, pid(side), CONNECTIONS, SLICE_MS);
  loads[`get-${side}`] = () => driveEach(servers[side].url, gets, pid(side), CONNECTIONS, SLICE_MS);
}

interface E2e {
  ms: number[];
  serverCpuUs: number;
}
/** E2E_RUNS tasks of the 10 ms tool one after another, principals in turn, polled to completion. */
async function e2e(side: Side): Promise<E2e> {
  const cpu0 = processCpuNs(pid(side));
  const ms: number[] = [];
  for (let i = 0; i < E2E_RUNS; i += 1) {
    ms.push(await seenCompleted(eps[side], `ten_ms${suffix[side]}`, bearers[i % PRINCIPALS]));
  }
  return { ms, serverCpuUs: (processCpuNs(pid(side)) - cpu0) / 1000 / E2E_RUNS };
}

const warm = (name: string) => (loads[name] as () => Promise<LoadResult>)();
for (const name of Object.keys(loads)) await warm(name);
for (const side of SIDES) await e2e(side);

const m: Record<string, LoadResult[]> = Object.fromEntries(Object.keys(loads).map((k) => [k, []]));
const ends: Record<Side, E2e[]> = { on: [], cap: [], off: [] };
for (let round = 0; round < ROUNDS; round += 1) {
  // Each side goes first in some round, and the order turns round every other round.
  const turned = [...SIDES.slice(round % 3), ...SIDES.slice(0, round % 3)];
  const order = round % 2 === 0 ? turned : turned.reverse();
  for (const kind of ['create', 'get']) {
    for (const side of order) m[`${kind}-${side}`]?.push(await warm(`${kind}-${side}`));
  }
  for (const side of order) ends[side].push(await e2e(side));
}
for (const ep of Object.values(eps)) ep.close();
await Promise.all(Object.values(servers).map((s) => s.stop()));
rmSync(dir, { recursive: true, force: true });

const at = (name: string) => m[name] as LoadResult[];
const vs = (side: Side, base: Side) => ({
  create: compare(at(`create-${side}`), at(`create-${base}`)),
  get: compare(at(`get-${side}`), at(`get-${base}`)),
  e2e: e2eCompare(side, base),
});
const p50s = (side: Side) => ends[side].map((r) => median(r.ms));
function e2eCompare(side: Side, base: Side): Comparison {
  const ratios = p50s(base).map((b, i) => b / (p50s(side)[i] as number));
  const cpu = median(ends[base].map((r, i) => r.serverCpuUs / (ends[side][i] as E2e).serverCpuUs));
  const text = `${median(ratios).toFixed(2)}× (${spread(ratios)})`;
  return { median: median(ratios), spread: spread(ratios), cpu, text };
}
const onVsOff = vs('on', 'off');
const capVsOff = vs('cap', 'off');
const onVsCap = vs('on', 'cap');

function e2eRow(label: string, side: Side, against?: Comparison, base = ''): string[] {
  const all = ends[side].flatMap((r) => r.ms);
  const cpu = ends[side].map((r) => r.serverCpuUs);
  return [
    label,
    `p50 ${median(all).toFixed(2)} ms, p99 ${percentile(all, 99).toFixed(2)} (round p50s ${spread(p50s(side))})`,
    `${median(cpu).toFixed(0)} (${spread(cpu, 0)})`,
    against === undefined ? '(baseline)' : base,
    against === undefined ? '' : `${against.text} (${base} p50 / this p50)`,
    against === undefined ? '' : `${against.cpu.toFixed(2)}×`,
  ];
}

const meets = (c: Comparison) => c.median >= 0.9 && c.cpu >= 0.9;
const goal = (what: string, c: Comparison) => ({
  text: `${what} with the cap and a principal key on ≥ 0.9× off (${c.text}, server CPU per task ${c.cpu.toFixed(2)}×; fails if either is below 0.90)`,
  met: meets(c),
});
const ON = 'on: cap 10,000, `concurrency: { limit: 1000, key: principal }`';
const CAP = 'cap only: cap 10,000, no concurrency';
const OFF = 'off: cap effectively off, no concurrency';
const E2E = '10 ms tool seen completed by polling';

report({
  title: 'Run policy on SQLite: queue cap and a per-principal concurrency key, on against off',
  description:
    'Three `taskrail serve` children on SQLite, built alike: the same tools file (a no-op and a 10 ms tool, each with and without `concurrency: { limit: 1000, key: principal }`, all four schemas built once in each), the default 16 slots, `--auth` with ' +
    `${PRINCIPALS} bearer tokens, requests of the ${PRINCIPALS} principals in turn on each. ` +
    '**on**: the default `--max-queued-per-principal` (10,000) and the keyed tools; **cap only**: the default cap and the tools without concurrency (so on against cap only is the key’s share, cap only against off the cap’s); **off**: `--max-queued-per-principal` 2^53−1 and the tools without concurrency. ' +
    'Fair share cannot be turned off (it is always on, docs/operations.md), so every side runs it. ' +
    `Throughput: the raw-socket generator of bench/lib/load.ts, ${CONNECTIONS} keep-alive connections, ${WARM_UP_MS / 1000} s unmeasured per measure, then ${ROUNDS} rounds of ${SLICE_MS} ms, the sides interleaved (each side first in some round, the order reversed every other round); create = a no-op task created (its run counted with it), tasks/get = a completed task of the caller. ` +
    `End to end: per round ${E2E_RUNS} tasks of the 10 ms tool one after another, each created and polled with tasks/get at its pollIntervalMs (1 ms) until seen completed. ` +
    'CPU per task: the server process’s on-CPU time (all threads, schedstat) per request, or per end-to-end task. Ratios are this / baseline for req/s (baseline p50 / this p50 for the end to end), baseline / this for CPU, medians of the per-round ratios (min–max).',
  columns: [
    'measure',
    'req/s or end to end (min–max of rounds)',
    'server CPU µs per request or task (min–max)',
    'against',
    'ratio to the baseline (min–max)',
    'ratio of server CPU (baseline / this)',
  ],
  rows: [
    loadRow(`create, ${OFF}`, at('create-off')),
    loadRow(`create, ${CAP}`, at('create-cap'), capVsOff.create, 'off'),
    loadRow(`create, ${ON}`, at('create-on'), onVsCap.create, 'cap only'),
    loadRow(`create, ${ON}`, at('create-on'), onVsOff.create, 'off'),
    loadRow(`tasks/get, ${OFF}`, at('get-off')),
    loadRow(`tasks/get, ${CAP}`, at('get-cap'), capVsOff.get, 'off'),
    loadRow(`tasks/get, ${ON}`, at('get-on'), onVsCap.get, 'cap only'),
    loadRow(`tasks/get, ${ON}`, at('get-on'), onVsOff.get, 'off'),
    e2eRow(`${E2E}, ${OFF}`, 'off'),
    e2eRow(`${E2E}, ${CAP}`, 'cap', capVsOff.e2e, 'off'),
    e2eRow(`${E2E}, ${ON}`, 'on', onVsCap.e2e, 'cap only'),
    e2eRow(`${E2E}, ${ON}`, 'on', onVsOff.e2e, 'off'),
  ],
  goals: [
    goal('create throughput', onVsOff.create),
    goal('tasks/get throughput', onVsOff.get),
    goal('end to end p50', onVsOff.e2e),
  ],
});
process.exit(0);
