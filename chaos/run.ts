/**
 * `npm run chaos`: a few hundred mixed tasks while servers (and, on Redis, workers) are
 * SIGKILLed and restarted on the same store, every connection is cut after about a second by a
 * proxy, and client processes are killed and resumed from their ledgers. Ends with one line:
 * `chaos: tasks N, lost 0, duplicated terminal writes 0, stuck 0, wrong results 0,
 * duplicate creations 0` (a retried create that made a second task).
 * CHAOS_SEED replays a run; TASKRAIL_REDIS_URL adds the Redis phase, TASKRAIL_POSTGRES_URL the
 * Postgres ones (chaos/postgres-phase.ts). CHAOS_PHASES=NAME,… runs only the phases named
 * (sqlite, redis, postgres, postgres-restart).
 */
import { randomBytes, randomInt } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/stores/open.js';
import { isTerminal } from '../src/task/status.js';
import { deleteRedisKeys } from '../test/helpers/redis-keys.js';
import { allTasks, judge, readClientLines, type Counts } from './check.js';
import { plan, prng, type Spec } from './expect.js';
import { CLIENT, serve, start, worker, type Proc, type Victim } from './procs.js';
import { startProxy } from './proxy.js';
import { postgresPhases } from './postgres-phase.js';

const seed = Number(process.env['CHAOS_SEED'] ?? randomInt(2 ** 31));
const random = prng(seed);
const CHAOS_MS = Number(process.env['CHAOS_MS'] ?? 50_000);
const CLIENT_MS = CHAOS_MS + 50_000;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const between = (lo: number, hi: number) => lo + random() * (hi - lo);
const log = (line: string) => process.stderr.write(`chaos: ${line}\n`);
const chosen = (process.env['CHAOS_PHASES'] ?? '').split(',').filter((name) => name !== '');
const wanted = (name: string) => chosen.length === 0 || chosen.includes(name);

interface Phase {
  name: string;
  store: string;
  clients: number;
  perClient: number;
  firstN: number;
  victims: (store: string) => Promise<Victim[]>;
}

async function phase(p: Phase): Promise<Counts> {
  const home = mkdtempSync(join(tmpdir(), `taskrail-chaos-${p.name}-`));
  const victims = await p.victims(p.store);
  const proxy = await startProxy(random);
  const route = () =>
    proxy.setUpstreams(victims.flatMap((v) => (v.port === undefined ? [] : [v.port])));
  route();
  const url = `http://127.0.0.1:${proxy.port}/mcp`;
  const observer = await openStore(p.store);
  const terminalWrites = new Map<string, number>();
  if (!p.store.startsWith('sqlite')) {
    observer.events.on('task:transition', ({ task, to }) => {
      if (isTerminal(to)) terminalWrites.set(task.id, (terminalWrites.get(task.id) ?? 0) + 1);
    });
  }
  const specs: Spec[] = plan(random, p.firstN, p.clients * p.perClient);
  const clients: Proc[] = [];
  const env = (i: number) => ({
    TASKRAIL_HOME: join(home, `client-${i}`),
    CHAOS_CLIENT_MS: String(CLIENT_MS),
  });
  const launch = (i: number, mode: string, extra: string[] = []) => {
    const proc = start([CLIENT, url, mode, ...extra], env(i));
    clients.push(proc);
    return proc;
  };
  const slice = (i: number) => JSON.stringify(specs.slice(i * p.perClient, (i + 1) * p.perClient));
  const running = Array.from({ length: p.clients }, (_, i) => launch(i, 'run', [slice(i)]));
  await chaosLoop(victims, running, route, (i) => launch(i, 'resume', [slice(i)]));
  log(`${p.name}: chaos over, waiting for clients`);
  await Promise.all(clients.map((c) => c.exited));
  await pause(500);
  const seen = readClientLines(clients.flatMap((c) => c.lines));
  const counts = judge(specs, await allTasks(observer), seen, terminalWrites);
  await observer.close();
  await Promise.all(victims.map((v) => v.proc.kill('SIGTERM')));
  await proxy.close();
  rmSync(home, { recursive: true, force: true });
  for (const note of counts.notes.slice(0, 20)) log(`${p.name}: ${note}`);
  log(
    `${p.name}: ${counts.tasks} tasks, ${counts.extraCreations} extra creations from lost create replies`,
  );
  return counts;
}

/** Kills a random victim every 2–5 s, and half the clients once each (then resumes them). */
async function chaosLoop(
  victims: Victim[],
  clients: Proc[],
  route: () => void,
  resume: (i: number) => Proc,
): Promise<void> {
  const ends = Date.now() + CHAOS_MS;
  const toKill = new Set(clients.map((_, i) => i).filter((i) => i % 2 === 0));
  for (let round = 1; Date.now() < ends; round++) {
    await pause(between(2000, 5000));
    const due = victims.find((v) => v.every !== undefined && round % v.every === 0);
    const victim = due ?? (victims[Math.floor(random() * victims.length)] as Victim);
    log(`SIGKILL ${victim.name}`);
    await victim.proc.kill('SIGKILL');
    await pause(between(100, 1000));
    const restarting = Date.now();
    await victim.restart();
    const took = Date.now() - restarting;
    if (took > 5000) log(`${victim.name} took ${took} ms to come back`);
    route();
    const client = [...toKill][0];
    if (client !== undefined && random() < 0.7) {
      toKill.delete(client);
      log(`SIGKILL client ${client}, then resume from its ledger`);
      await clients[client]?.kill('SIGKILL');
      resume(client);
    }
  }
}

function servers(count: number, extra: string[]): (store: string) => Promise<Victim[]> {
  return async (store) =>
    Promise.all(
      Array.from({ length: count }, async (_, i) => {
        const first = await serve(store, extra);
        const victim: Victim = {
          name: `serve ${i}`,
          ...first,
          async restart() {
            Object.assign(victim, await serve(store, extra));
          },
        };
        return victim;
      }),
    );
}

async function workers(store: string, count: number): Promise<Victim[]> {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const victim: Victim = {
        name: `worker ${i}`,
        proc: await worker(store),
        async restart() {
          victim.proc = await worker(store);
        },
      };
      return victim;
    }),
  );
}

async function main(): Promise<number> {
  process.stdout.write(`chaos seed ${seed} (replay with CHAOS_SEED=${seed})\n`);
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-chaos-'));
  const results: Counts[] = [];
  if (wanted('sqlite')) {
    results.push(
      await phase({
        name: 'sqlite',
        store: `sqlite:${join(dir, 'tasks.db')}`,
        clients: 6,
        perClient: 50,
        firstN: 1,
        victims: servers(1, []),
      }),
    );
  }
  const redis = process.env['TASKRAIL_REDIS_URL'];
  if (!wanted('redis')) log('redis phase not chosen');
  else if (redis !== undefined && redis !== '') {
    const url = new URL(redis);
    url.searchParams.set('prefix', `chaos-${randomBytes(4).toString('hex')}`);
    results.push(
      await phase({
        name: 'redis',
        store: url.toString(),
        clients: 4,
        perClient: 50,
        firstN: 100_001,
        victims: async (store) => [
          ...(await servers(2, ['--no-worker'])(store)),
          ...(await workers(store, 2)),
        ],
      }),
    );
    await deleteRedisKeys(url.toString(), url.searchParams.get('prefix') as string);
  } else log('redis phase skipped: TASKRAIL_REDIS_URL is not set');
  results.push(...(await postgresPhases({ phase, servers, workers, log, wanted })));
  rmSync(dir, { recursive: true, force: true });
  const sum = (key: keyof Omit<Counts, 'notes'>) => results.reduce((a, c) => a + c[key], 0);
  const bad = sum('lost') + sum('duplicated') + sum('stuck') + sum('wrong') + sum('extraCreations');
  process.stdout.write(
    `chaos: tasks ${sum('tasks')}, lost ${sum('lost')}, duplicated terminal writes ${sum('duplicated')}, ` +
      `stuck ${sum('stuck')}, wrong results ${sum('wrong')}, ` +
      `duplicate creations ${sum('extraCreations')}\n`,
  );
  return bad === 0 ? 0 : 1;
}

/** Our keys only: the Redis is shared, so never FLUSHDB. */

process.exit(await main());
