/**
 * End to end on SQLite: a 10 ms tool created as a task over HTTP and seen completed, by a bare
 * polling loop and by taskrail's own client (ledger, push), each run interleaved with the bare
 * 10 ms wait it is compared with. Prints one JSON line (see scripts/bench.mjs).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clientLatency, e2eFloorGoal, e2eLatency, e2eRow, floorRow } from './lib/e2e.js';
import { BENCH_TOOLS, endpoint, MAIN, SERVERS, startServer } from './lib/http.js';
import { preemptions, processCpuNs } from './lib/load.js';
import { leastDurablePush } from './lib/push-client.js';
import { report, type Section } from './lib/stats.js';

const RUNS = 150;
const dir = mkdtempSync(join(tmpdir(), 'taskrail-bench-e2e-'));
const serveArgs = ['serve', '--port', '0', '--tools', BENCH_TOOLS, '--log-level', 'warn'];
const server = await startServer(MAIN, [...serveArgs, '--store', `sqlite:${join(dir, 't.db')}`]);
const ep = endpoint(server.url);
const floorServer = await startServer(SERVERS, ['wait-10ms']);
const floorEp = endpoint(floorServer.url);
const serverPid = server.process.pid as number;
const serverCpu = processCpuNs(serverPid);
const polled = await e2eLatency(ep, RUNS);
const serverCpuMid = processCpuNs(serverPid);
const floorPid = floorServer.process.pid as number;
const switchesFrom = { server: preemptions(serverPid), floor: preemptions(floorPid) };
const ownFrom = preemptions(process.pid);
const viaClient = await clientLatency(server.url, RUNS, floorEp);
const serverSwitches = (preemptions(serverPid) - switchesFrom.server) / RUNS;
const ownSwitches = (preemptions(process.pid) - ownFrom) / RUNS;
// The floor is asked after every other call.
const floorSwitches = (preemptions(floorPid) - switchesFrom.floor) / (RUNS / 2);
const serverUs = (from: number, to: number): string => ((to - from) / 1000 / RUNS).toFixed(0);
const serverPolled = serverUs(serverCpu, serverCpuMid);
const serverViaClient = serverUs(serverCpuMid, processCpuNs(serverPid));
// The same client against taskrail's server: which side of the gap is whose.
const leastClientOnServe = await leastDurablePush(server.url, RUNS, floorEp);
const pushServer = await startServer(SERVERS, ['push-10ms', join(dir, 'push.db')]);
const leastPush = await leastDurablePush(pushServer.url, RUNS, floorEp);
ep.close();
floorEp.close();
await Promise.all([server.stop(), floorServer.stop(), pushServer.stop()]);
rmSync(dir, { recursive: true, force: true });

const section: Section = {
  title: 'End to end on SQLite: a 10 ms tool seen completed',
  description:
    `\`taskrail serve\` on SQLite (a child process), a 10 ms tool created as a task, ${RUNS} runs one after another, seen completed by a bare loop polling tasks/get at its pollIntervalMs (1 ms), ` +
    "and by taskrail's client as a host runs it (SQLite ledger written before the call, the outcome pushed over `subscriptions/listen` with polling behind it). " +
    "Baseline: the tool's own time, a bare 10 ms wait measured in this process between runs. " +
    'Floor: a node:http server (a child process) answering a POST 10 ms after it arrived, asked by this process in place of the bare wait after every other call of taskrail’s client: what waking a server, its 10 ms and waking the client cost here before anything is stored. The goal (issue 37) is the floor + 1 ms p50; the polling client is stated against the same floor. ' +
    'The least durable push, run after them with its own floor trips: a node:http server that commits the task before its answer and the outcome before pushing it on the listen stream, and a client that writes the task and its outcome to a SQLite ledger, nothing of taskrail (bench/lib/push-floor.ts, push-client.ts): what the goal’s promises cost by themselves on this machine. ' +
    'That least durable client is also run against `taskrail serve`, between them: its distance from the least durable push is the server’s share of the gap, and its distance from taskrail’s client the client’s. ' +
    `CPU per call (schedstat, all threads): the polling loop ${polled.cpuUsPerCall.toFixed(0)} µs, ` +
    `taskrail's client ${viaClient.cpuUsPerCall.toFixed(0)} µs; the server ${serverPolled} µs ` +
    `while polled, ${serverViaClient} µs while followed by taskrail's client. ` +
    `Preemptions of the main thread (involuntary context switches) while taskrail's client ran: ` +
    `serve ${serverSwitches.toFixed(2)} per call, this process ${ownSwitches.toFixed(2)} per call, ` +
    `the floor server ${floorSwitches.toFixed(2)} per trip (a socket write's wake-up may run the reader on the writer's CPU, ` +
    'which then waits for it: see "Fifth pass" below).',
  columns: ['measure', 'ms p50 / p99', 'baseline ms p50', 'ratio of p50'],
  rows: [
    e2eRow('seen completed by a polling client', polled),
    e2eRow("seen completed by taskrail's client (ledger, push)", viaClient),
    floorRow(viaClient),
    e2eRow('least durable client (push-client.ts) against taskrail serve', leastClientOnServe),
    floorRow(leastClientOnServe, 'floor, asked between the calls of that client'),
    e2eRow('least durable push, no taskrail (bench/lib/push-floor.ts, push-client.ts)', leastPush),
    floorRow(leastPush, 'floor, asked between the calls of the least durable push'),
  ],
  // Issue 37's goal is against the floor, not the bare wait: what storing and pushing add.
  goals: [e2eFloorGoal(viaClient, polled, 1, leastPush, leastClientOnServe)],
};
report(section);
process.exit(0);
