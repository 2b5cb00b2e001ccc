/**
 * Two builds of taskrail in one run: `node .build/bench/compare/builds.js --before OLD_MAIN`
 * (OLD_MAIN: another checkout's dist/cli/main.js, built there with `npm run build`) starts
 * `taskrail serve` from each build on its own SQLite file and drives the same calls at both,
 * interleaved round by round, so both see the same machine. Prints a table of after/before
 * ratios: req/s and server CPU per request (before / after, so above 1 means the new build
 * spends less). Not a section of `npm run bench`: it needs a second build. Used for a
 * refactor's promise that the figures stay within 5%. Only the 2026-07-28 wire is here; the
 * `previous` section (bench/previous.ts) builds the previous mains itself and adds the
 * 2025-11-25 session path (its SSE frames read and checked for a result).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { BENCH_TOOLS, endpoint, MAIN, startServer, wire2026, type Call } from '../lib/http.js';
import type { ChildServer } from '../lib/http.js';
import { drive, type LoadResult } from '../lib/load.js';
import { compare } from '../lib/load-rows.js';
import { taskrailCompletedTaskGet } from '../lib/peers.js';
import { rounds } from '../lib/http.js';
import { median } from '../lib/stats.js';

const { values } = parseArgs({
  options: {
    before: { type: 'string' },
    rounds: { type: 'string', default: '7' },
    'slice-ms': { type: 'string', default: '1000' },
  },
});
if (values.before === undefined) {
  console.error('usage: node .build/bench/compare/builds.js --before OTHER/dist/cli/main.js');
  process.exit(2);
}
const ROUNDS = Number(values.rounds);
const SLICE_MS = Number(values['slice-ms']);
const CONNECTIONS = 32;
const WARM_UP_MS = 2000;

const dir = mkdtempSync(join(tmpdir(), 'taskrail-bench-builds-'));
const serve = (main: string, name: string) =>
  startServer(main, [
    'serve',
    '--port',
    '0',
    '--tools',
    BENCH_TOOLS,
    '--log-level',
    'warn',
    '--store',
    `sqlite:${join(dir, `${name}.db`)}`,
  ]);
const builds = { before: await serve(values.before, 'before'), after: await serve(MAIN, 'after') };

const noop = (tasks: boolean) => wire2026('tools/call', { name: 'noop', arguments: {} }, tasks);
/** The calls measured, built against one build's server (ids and sessions are per server). */
async function callsFor(server: ChildServer): Promise<Record<string, Call>> {
  const ep = endpoint(server.url);
  const calls = {
    'create (2026-07-28)': noop(true),
    'tasks/get (2026-07-28)': await taskrailCompletedTaskGet(ep),
    'synchronous tools/call (2026-07-28)': noop(false),
  };
  ep.close();
  return calls;
}
const calls = { before: await callsFor(builds.before), after: await callsFor(builds.after) };
const measures = Object.keys(calls.after);
const run = (build: 'before' | 'after', measure: string, ms: number) => () => {
  const server = builds[build];
  const call = calls[build][measure] as Call;
  return drive(server.url, call, server.process.pid as number, CONNECTIONS, ms);
};
const targets: Record<string, () => Promise<LoadResult>> = {};
for (const measure of measures) {
  for (const build of ['before', 'after'] as const) {
    await run(build, measure, WARM_UP_MS)();
    targets[`${build} ${measure}`] = run(build, measure, SLICE_MS);
  }
}
const m = await rounds(ROUNDS, targets);
await Promise.all(Object.values(builds).map((s) => s.stop()));
rmSync(dir, { recursive: true, force: true });

console.log(
  `| measure (${CONNECTIONS} connections) | before req/s | after req/s | after/before req/s (min–max) | server CPU per request, before/after |`,
);
console.log('|---|---|---|---|---|');
for (const measure of measures) {
  const before = m[`before ${measure}`] as LoadResult[];
  const after = m[`after ${measure}`] as LoadResult[];
  const c = compare(after, before);
  const rps = (runs: LoadResult[]) => Math.round(median(runs.map((r) => r.perSecond)));
  console.log(`| ${measure} | ${rps(before)} | ${rps(after)} | ${c.text} | ${c.cpu.toFixed(2)}× |`);
}
