/**
 * Redis over HTTP (needs TASKRAIL_REDIS_URL; otherwise reports why it skipped): a 10 ms tool
 * seen completed. Worker scaling is its own section, redis-scaling. Keys under a unique prefix.
 */
import { randomBytes } from 'node:crypto';
import { deleteRedisKeys } from '../test/helpers/redis-keys.js';
import { clientLatency, e2eGoal, e2eLatency, e2eRow, floorRow } from './lib/e2e.js';
import { BENCH_TOOLS, endpoint, MAIN, SERVERS, startServer } from './lib/http.js';
import { report, type Section } from './lib/stats.js';

const base = process.env['TASKRAIL_REDIS_URL'];
const TITLE = 'HTTP on Redis: end to end';
if (base === undefined || base === '') {
  report({
    title: TITLE,
    description: 'Skipped: TASKRAIL_REDIS_URL is not set (e.g. redis://127.0.0.1:6379/0).',
    columns: [],
    rows: [],
    goals: [],
  });
  process.exit(0);
}
const url = new URL(base);
const prefix = `bench-${randomBytes(4).toString('hex')}`;
url.searchParams.set('prefix', prefix);
const store = url.toString();
const quiet = ['--tools', BENCH_TOOLS, '--log-level', 'warn', '--store', store];

// End to end: serve runs the tasks itself.
const served = await startServer(MAIN, ['serve', '--port', '0', ...quiet]);
const e2eEp = endpoint(served.url);
const floorServer = await startServer(SERVERS, ['wait-10ms']);
const floorEp = endpoint(floorServer.url);
const e2e = await e2eLatency(e2eEp, 100);
const viaClient = await clientLatency(served.url, 100, floorEp);
e2eEp.close();
floorEp.close();
await Promise.all([served.stop(), floorServer.stop()]);

await deleteRedisKeys(base as string, prefix);

const section: Section = {
  title: TITLE,
  description:
    "End to end: `taskrail serve` on Redis (BullMQ, worker in the same process), a 10 ms tool, 100 runs, seen completed by a bare loop polling at its 1 ms pollIntervalMs and by taskrail's client (SQLite ledger, outcome pushed over `subscriptions/listen`); baseline: the tool's own time (a bare 10 ms wait between runs); floor: a node:http server answering a POST 10 ms after it arrived, asked after each call. Worker scaling: the redis-scaling section.",
  columns: ['measure', 'value', 'baseline', 'ratio'],
  rows: [
    e2eRow('10 ms tool seen completed by a polling client, ms p50 / p99', e2e),
    e2eRow(
      "10 ms tool seen completed by taskrail's client (ledger, push), ms p50 / p99",
      viaClient,
    ),
    floorRow(viaClient),
  ],
  goals: [e2eGoal(viaClient, 2)],
};
report(section);
process.exit(0);
