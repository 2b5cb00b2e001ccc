/**
 * taskrail over HTTP at 32 connections next to its baselines, all child processes measured in
 * this run and interleaved round by round: the bare node:http JSON-RPC answer (the machine's
 * ceiling), SDK v1 experimental tasks on its in-memory store, an SDK v2 server built the way
 * taskrail builds its own (schemas once, a McpServer per request), and `taskrail serve` on
 * SQLite with the default and the `synchronous=full` durability. The load comes from the
 * raw-socket generator in _load.ts; server CPU per request is read from /proc. Prints one
 * JSON line (see scripts/bench.mjs).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import {
  BENCH_TOOLS,
  checked,
  endpoint,
  MAIN,
  wire2026,
  pause,
  rounds,
  SERVERS,
  startServer,
  type Call,
  type ChildServer,
  type Endpoint,
} from './lib/http.js';
import { drive, type LoadResult } from './lib/load.js';
import { compare, loadRow, LOAD_COLUMNS, type Comparison } from './lib/load-rows.js';
import { taskrailCompletedTaskGet, v1CompletedTaskGet, v1Session } from './lib/peers.js';
import { FLOOR_TASK_ID } from './lib/sqlite-floor.js';
import { report, type Section } from './lib/stats.js';

const ROUNDS = 5;
const SLICE_MS = 1000;
const CONNECTIONS = 32;
/**
 * Each measure runs this long before the rounds, every server alike: a server's first second
 * of load runs code V8 has not yet optimized (taskrail's tasks/get answered 0.42–0.48× bare
 * in its first second against 0.56–0.60× from the third on), and a long-running server is
 * measured warm.
 */
const WARM_UP_MS = 2000;
const dir = mkdtempSync(join(tmpdir(), 'taskrail-bench-http-'));
const paths = {
  normal: join(dir, 'tasks.db'),
  full: join(dir, 'tasks-full.db'),
  floorGet: join(dir, 'floor-get.db'),
  floorCreate: join(dir, 'floor-create.db'),
  floorStatements: join(dir, 'floor-statements.db'),
};

const serveArgs = ['serve', '--port', '0', '--tools', BENCH_TOOLS, '--log-level', 'warn'];
const servers = {
  bare: await startServer(SERVERS, ['bare']),
  v2: await startServer(SERVERS, ['sdk-v2']),
  v1: await startServer(SERVERS, ['sdk-v1']),
  floorGet: await startServer(SERVERS, ['sqlite-get', paths.floorGet]),
  floorCreate: await startServer(SERVERS, ['sqlite-create', paths.floorCreate]),
  floorStatements: await startServer(SERVERS, ['sqlite-create-statements', paths.floorStatements]),
  tr: await startServer(MAIN, [...serveArgs, '--store', `sqlite:${paths.normal}`]),
  trFull: await startServer(MAIN, [
    ...serveArgs,
    '--store',
    `sqlite:${paths.full}?synchronous=full`,
  ]),
};
await pause(2000);
const restRss = { taskrail: servers.tr.rssMiB(), v2: servers.v2.rssMiB() };
const ep = {
  v1: endpoint(servers.v1.url),
  tr: endpoint(servers.tr.url),
  trFull: endpoint(servers.trFull.url),
};

const noop = (tasks: boolean) => wire2026('tools/call', { name: 'noop', arguments: {} }, tasks);
const v1 = await v1Session(ep.v1);
const v1Create = v1('tools/call', { name: 'noop', arguments: {}, task: { ttl: 3_600_000 } });
const loads: Record<string, { server: ChildServer; call: Call }> = {
  bare: { server: servers.bare, call: noop(false) },
  trCreate: { server: servers.tr, call: noop(true) },
  trFullCreate: { server: servers.trFull, call: noop(true) },
  v1Create: { server: servers.v1, call: v1Create },
  floorCreate: { server: servers.floorCreate, call: noop(true) },
  floorStatements: { server: servers.floorStatements, call: noop(true) },
  trGet: { server: servers.tr, call: await taskrailCompletedTaskGet(ep.tr) },
  floorGet: {
    server: servers.floorGet,
    call: wire2026('tasks/get', { taskId: FLOOR_TASK_ID }, true),
  },
  v1Get: { server: servers.v1, call: await v1CompletedTaskGet(ep.v1, v1) },
  v2Sync: { server: servers.v2, call: noop(false) },
  trSync: { server: servers.tr, call: noop(false) },
};
const run = (name: string, ms: number) => () => {
  const { server, call } = loads[name] as { server: ChildServer; call: Call };
  return drive(server.url, call, server.process.pid as number, CONNECTIONS, ms);
};
for (const name of Object.keys(loads)) await run(name, WARM_UP_MS)();

/**
 * Of `lanes` × `each` concurrent creations, how many were in the SQLite file when their reply
 * arrived (read by a separate connection, so only committed rows count).
 */
async function committedBeforeReply(target: Endpoint, path: string, lanes = 32, each = 4) {
  const db = new Database(path, { readonly: true });
  const find = db.prepare('SELECT 1 FROM tasks WHERE id = ?');
  let found = 0;
  const lane = async () => {
    for (let i = 0; i < each; i += 1) {
      const created = await checked(target, noop(true));
      if (find.get(String(created['taskId'])) !== undefined) found += 1;
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
  db.close();
  return { found, of: lanes * each };
}
const committed = {
  normal: await committedBeforeReply(ep.tr, paths.normal),
  full: await committedBeforeReply(ep.trFull, paths.full),
};

const names = Object.keys(loads);
const m = await rounds<string, LoadResult>(
  ROUNDS,
  Object.fromEntries(names.map((name) => [name, run(name, SLICE_MS)])),
);
const loadedRss = { taskrail: servers.tr.rssMiB(), v2: servers.v2.rssMiB() };
for (const e of Object.values(ep)) e.close();
await Promise.all(Object.values(servers).map((s) => s.stop()));
rmSync(dir, { recursive: true, force: true });

const at = (name: string) => m[name] as LoadResult[];
const vs = {
  createBare: compare(at('trCreate'), at('bare')),
  createFullBare: compare(at('trFullCreate'), at('bare')),
  createV1: compare(at('trCreate'), at('v1Create')),
  createFullV1: compare(at('trFullCreate'), at('v1Create')),
  getBare: compare(at('trGet'), at('bare')),
  getV1: compare(at('trGet'), at('v1Get')),
  floorGetBare: compare(at('floorGet'), at('bare')),
  floorCreateBare: compare(at('floorCreate'), at('bare')),
  getFloor: compare(at('trGet'), at('floorGet')),
  createFloor: compare(at('trCreate'), at('floorCreate')),
  statementsFloor: compare(at('floorStatements'), at('floorCreate')),
  sync: compare(at('trSync'), at('v2Sync')),
};
const bareGen = at('bare').map((r) => r.clientCpuUs);
const rssRatio = restRss.taskrail / restRss.v2;
const allIn = (c: { found: number; of: number }) => c.found === c.of;
const spot = (c: { found: number; of: number }) => `${c.found}/${c.of} rows in the file`;

/**
 * A goal holds only if both the req/s ratio and the server-CPU-per-request ratio reach it: on
 * a loaded machine the baseline's req/s can fall with the load (flattering the ratio), while
 * CPU per request is what the server itself spends.
 */
const meets = (c: Comparison, goal: number) => c.median >= goal && c.cpu >= goal;
const both = (c: Comparison) => `req/s ${c.text}, server CPU per request ${c.cpu.toFixed(2)}×`;

const section: Section = {
  title: 'HTTP: taskrail serve next to bare node:http, SDK v2 and SDK v1, 32 connections',
  description:
    `Every server is a child process on 127.0.0.1, driven by this process's raw-socket HTTP/1.1 generator: ${CONNECTIONS} keep-alive connections, one request in flight on each (no pipelining), the request bytes built once. ` +
    `Every measure first runs ${WARM_UP_MS / 1000} s unmeasured (so the JIT has compiled each server’s paths), then ${ROUNDS} interleaved rounds of ${SLICE_MS} ms per measure; cells are medians of the rounds (min–max). ` +
    'Server CPU per request is the server process’s on-CPU time (the sum over its threads of /proc/PID/task/*/schedstat) divided by the requests answered; ' +
    'after the last reply of a slice the generator waits until the server is quiet (under 5% of a core for 50 ms) and counts that tail in both the CPU and the req/s, so work a server defers past its replies (the run of each created task) is measured with the creates that caused it, not left to run during the next measure’s slice. ' +
    'it moves less with the machine’s load than req/s does. ' +
    'Baselines: the bare `node:http` answer of one fixed JSON-RPC result (the ceiling: it parses nothing); SDK v1.32 with one stateful session, experimental tasks on its InMemoryTaskStore (a no-op task tool that stores its result at once); ' +
    'an SDK v2 server built as taskrail builds its own (the same four tools, their schemas and configs once, a McpServer per request, the body read, parsed and handed to the SDK by the same Node adapter taskrail uses). ' +
    'The SQLite floors: node:http servers that do only what a durable answer on SQLite must (bench/lib/sqlite-floor.ts): a tasks/get that parses the body, reads the row with one prepared statement and answers, the reads and answers of one event-loop turn together in its check phase as taskrail answers its cached rows (neither alone gets the fewer wake-ups of a turn’s answers leaving together; the bare answer and the SDK servers answer each request in its own callback); a create that inserts the row, answers once the commit shared by that event-loop turn’s inserts returned, then writes the task completed in the next shared commit (the run of a no-op), on taskrail’s schema in WAL with synchronous=NORMAL. Nothing a real server needs besides (checks, ids, leases, events, runs) is in them, so a goal above a floor’s own ratio to bare cannot be met by any SQLite-backed server that reads the row for each request. ' +
    'The create floor with taskrail’s own statements (bench/lib/statements-floor.ts) runs, in the same shared commits, the SQLite store’s prepared statements for what its promises need: the per-principal cap’s count read, the insert with the lease held from the start and the meta a create stores, the count’s row, and the completion as a compare-and-set (head read, guarded update, the count’s row); nothing else of taskrail. Its ratio to the plain floor is about the most a build that runs these statements can reach against it. ' +
    'taskrail: `taskrail serve` on SQLite with a no-op tool (`task: optional`), called with the tasks extension (a task is created, committed, and run) or without (synchronous). ' +
    `A goal is met only when both the req/s ratio and the ratio of server CPU per request reach it. The load generator’s own CPU per bare request was ${bareGen.map((v) => v.toFixed(0)).join(', ')} µs over the rounds: below the bare server’s, so the server, not the generator, is what saturates.`,
  columns: LOAD_COLUMNS,
  rows: [
    loadRow('bare node:http JSON-RPC answer (the ceiling)', at('bare')),
    loadRow('SDK v1 create (in-memory task)', at('v1Create')),
    loadRow('SDK v1 tasks/get (in-memory)', at('v1Get')),
    loadRow('SDK v2 synchronous no-op tools/call (schemas once)', at('v2Sync')),
    loadRow('SQLite floor: one row read (no taskrail)', at('floorGet'), vs.floorGetBare, 'bare'),
    loadRow(
      'SQLite floor: insert, commit, reply, write completed (no taskrail)',
      at('floorCreate'),
      vs.floorCreateBare,
      'bare',
    ),
    loadRow(
      'SQLite floor with taskrail’s own statements (lease, cap count, meta, compare-and-set; no engine)',
      at('floorStatements'),
      vs.statementsFloor,
      'SQLite floor',
    ),
    loadRow('taskrail create, sqlite (default durability)', at('trCreate'), vs.createBare, 'bare'),
    loadRow('taskrail create, sqlite (default durability)', at('trCreate'), vs.createV1, 'SDK v1'),
    loadRow(
      'taskrail create, sqlite (default durability)',
      at('trCreate'),
      vs.createFloor,
      'SQLite floor',
    ),
    loadRow(
      'taskrail create, sqlite?synchronous=full',
      at('trFullCreate'),
      vs.createFullBare,
      'bare',
    ),
    loadRow(
      'taskrail create, sqlite?synchronous=full',
      at('trFullCreate'),
      vs.createFullV1,
      'SDK v1',
    ),
    loadRow('taskrail tasks/get', at('trGet'), vs.getBare, 'bare'),
    loadRow('taskrail tasks/get', at('trGet'), vs.getV1, 'SDK v1'),
    loadRow('taskrail tasks/get', at('trGet'), vs.getFloor, 'SQLite floor'),
    loadRow('taskrail synchronous no-op tools/call', at('trSync'), vs.sync, 'SDK v2'),
    [
      'RSS at rest after start, MiB',
      restRss.taskrail.toFixed(1),
      '',
      `SDK v2: ${restRss.v2.toFixed(1)}`,
      `${rssRatio.toFixed(2)}×`,
      '',
    ],
    [
      'RSS after the load above, MiB',
      loadedRss.taskrail.toFixed(1),
      '',
      `SDK v2: ${loadedRss.v2.toFixed(1)}`,
      `${(loadedRss.taskrail / loadedRss.v2).toFixed(2)}×`,
      '',
    ],
  ],
  goals: [
    {
      text: `create ≥ 0.3× the bare answer, default durability (${both(vs.createBare)}; fails if either is below 0.30; the SQLite floor itself: ${both(vs.floorCreateBare)}), committed before the reply (${spot(committed.normal)} when 128 concurrent replies arrived; fails on any missing row)`,
      met: meets(vs.createBare, 0.3) && allIn(committed.normal),
    },
    {
      text: `create ≥ 0.15× the bare answer with \`synchronous=full\` group commit (${both(vs.createFullBare)}; fails if either is below 0.15), ${spot(committed.full)}`,
      met: meets(vs.createFullBare, 0.15) && allIn(committed.full),
    },
    {
      text: `create ≥ 3× SDK v1's in-memory create (default: ${both(vs.createV1)}; full: ${both(vs.createFullV1)}; fails if either default ratio is below 3)`,
      met: meets(vs.createV1, 3),
    },
    {
      text: `tasks/get ≥ 0.6× the bare answer (${both(vs.getBare)}; fails if either is below 0.60; the SQLite floor itself: ${both(vs.floorGetBare)})`,
      met: meets(vs.getBare, 0.6),
    },
    {
      text: `create ≥ 0.8× the SQLite floor (${both(vs.createFloor)}; fails if either is below 0.80; the store’s own statements with no engine: ${both(vs.statementsFloor)})`,
      met: meets(vs.createFloor, 0.8),
    },
    {
      text: `tasks/get ≥ 1.0× the SQLite floor (${both(vs.getFloor)}; fails if either is below 1.0)`,
      met: meets(vs.getFloor, 1),
    },
    {
      text: `tasks/get ≥ 3× SDK v1's in-memory tasks/get (${both(vs.getV1)}; fails if either is below 3)`,
      met: meets(vs.getV1, 3),
    },
    {
      text: `synchronous tools/call ≥ 1.0× an SDK v2 server built the same way (${both(vs.sync)}; fails if either is below 1.0)`,
      met: meets(vs.sync, 1),
    },
    {
      text: `resting RSS of serve ≤ 1.2× a bare SDK v2 server's (${rssRatio.toFixed(2)}×; fails above 1.2)`,
      met: rssRatio <= 1.2,
    },
  ],
};
report(section);
process.exit(0);
