/**
 * `npm run chaos`: a few hundred mixed tasks while servers (and, on Redis, workers) are
 * SIGKILLed or SIGTERMed and restarted on the same store, every connection is cut after about a
 * second by a proxy, client processes are killed and resumed from their ledgers, and the store
 * itself fails: another process holds the SQLite write lock, the disk under it fills up, our own
 * redis-server (AOF) restarts, one worker runs with its clock 30 s ahead, and on Redis and
 * PostgreSQL one worker is cut off from the store by a TCP relay (chaos/partition.ts). The
 * chaos tools log every handler start, so the run counts executions, not only final writes; a
 * process's "unhandled promise rejection" line is counted too. Ends with one line:
 * `chaos: tasks N, lost 0, duplicate executions 0 (retry:false), wrong outcomes 0, crashes 0,
 * unhandled rejections 0, …`.
 * CHAOS_SEED replays a run; CHAOS_MS sets each phase's chaos time. The Redis phase needs
 * redis-server (or TASKRAIL_REDIS_URL, then without the restart fault); TASKRAIL_POSTGRES_URL
 * adds the Postgres ones (chaos/postgres-phase.ts). CHAOS_PHASES=NAME,… runs only the phases
 * named (sqlite, redis, postgres, postgres-restart, the policy-* phases of chaos/policy-phase.ts,
 * the wakeups-* phases of chaos/wakeup-phase.ts).
 */
import { randomBytes, randomInt } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/stores/open.js';
import type { TaskRecord } from '../src/task/record.js';
import { isTerminal } from '../src/task/status.js';
import { deleteRedisKeys } from '../test/helpers/redis-keys.js';
import { allTasks, judge, readClientLines, type Counts } from './check.js';
import { countExecutions } from './executions.js';
import { plan, prng, type Spec } from './expect.js';
import {
  faketimeMissing,
  fillDisk,
  holdSqliteLock,
  mountSmallDisk,
  shiftedClock,
  startChaosRedis,
} from './faults.js';
import { CLIENT, serve, start, tally, worker, type Proc } from './procs.js';
import { partitionedWorker } from './partition.js';
import { startProxy } from './proxy.js';
import { postgresPhases } from './postgres-phase.js';
import { policyPhases } from './policy-phase.js';
import { KEYED_LONGEST_MS } from './policy-expect.js';
import { permitJournal, POLICY } from './policy-tools.js';
import { measureOverlap } from './overlap.js';
import { wakeupPhases } from './wakeup-phase.js';

const seed = Number(process.env['CHAOS_SEED'] ?? randomInt(2 ** 31));
const random = prng(seed);
const CHAOS_MS = Number(process.env['CHAOS_MS'] ?? 30_000);
const CLIENT_MS = CHAOS_MS + 50_000;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const between = (lo: number, hi: number) => lo + random() * (hi - lo);
const log = (line: string) => process.stderr.write(`chaos: ${line}\n`);
const chosen = (process.env['CHAOS_PHASES'] ?? '').split(',').filter((name) => name !== '');
const wanted = (name: string) => chosen.length === 0 || chosen.includes(name);

/** A server or worker the chaos loop may stop; `restart` brings it back on the same store. */
interface Victim {
  name: string;
  proc: Proc;
  port?: number;
  restart(): Promise<void>;
}

/** A store fault: runs to its end (the fault is over when it resolves). */
export type StoreFault = { name: string; run(): Promise<void> };

interface Phase {
  name: string;
  store: string;
  clients: number;
  perClient: number;
  firstN: number;
  victims: (store: string) => Promise<Victim[]>;
  faults: StoreFault[];
  plan?: typeof plan;
  /** The share of CHAOS_MS this phase's chaos lasts (default 1). */
  chaosShare?: number;
  /** A line on how the phase's tasks ended. */
  describe?: (tasks: TaskRecord[]) => string;
  /** Once the clients are done: brings the store to rest; the wake-up jobs left (must be 0). */
  settle?: (store: string) => Promise<number>;
}

interface PhaseResult extends Counts {
  executions: number;
  duplicateOnce: number;
  crashes: number;
  unhandledRejections: number;
  /** Starts of a `p_keyed` run beyond its key's concurrency limit: must be 0. */
  overLimit: number;
  /** Delayed jobs left of tasks that ended or are gone (chaos/wakeup-phase.ts): must be 0. */
  wakeJobsLeft: number;
}

/** Processes that exited without being told to: a crash, counted. */
const expectedExits = new WeakSet<Proc>();
let crashes = 0;

function watched(proc: Proc, name: string): Proc {
  void proc.exited.then(() => {
    if (expectedExits.has(proc)) return;
    crashes += 1;
    log(`CRASH: ${name} exited on its own (code ${String(proc.process.exitCode)})`);
  });
  return proc;
}

async function stopVictim(victim: Victim, signal: NodeJS.Signals): Promise<void> {
  expectedExits.add(victim.proc);
  await victim.proc.kill(signal);
}

async function phase(p: Phase): Promise<PhaseResult> {
  const home = mkdtempSync(join(tmpdir(), `taskrail-chaos-${p.name}-`));
  const execFile = join(home, 'executions.log');
  process.env['CHAOS_EXEC_FILE'] = execFile;
  const crashesBefore = crashes;
  const rejectionsBefore = tally.unhandledRejections;
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
  const specs: Spec[] = (p.plan ?? plan)(random, p.firstN, p.clients * p.perClient);
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
  const chaosMs = CHAOS_MS * (p.chaosShare ?? 1);
  const resume = (i: number) => launch(i, 'resume', [slice(i)]);
  await chaosLoop(chaosMs, { victims, faults: p.faults, clients: running, route, resume });
  log(`${p.name}: chaos over, waiting for clients`);
  await Promise.all(clients.map((c) => c.exited));
  await pause(500);
  const wakeJobsLeft = (await p.settle?.(p.store)) ?? 0;
  const seen = readClientLines(clients.flatMap((c) => c.lines));
  const tasks = await allTasks(observer);
  const counts = judge(specs, tasks, seen, terminalWrites);
  if (p.describe !== undefined) log(`${p.name}: ${p.describe(tasks)}`);
  await observer.close();
  await Promise.all(victims.map((v) => stopVictim(v, 'SIGTERM')));
  await proxy.close();
  const runs = countExecutions(execFile);
  const overlap = measureOverlap(permitJournal(execFile), POLICY.keyedLimit, KEYED_LONGEST_MS);
  if (overlap.peak.size > 0) {
    const peaks = [...overlap.peak].map(([key, peak]) => `${key} ${peak}`).join(', ');
    log(`${p.name}: most p_keyed runs at once per key (limit ${POLICY.keyedLimit}): ${peaks}`);
  }
  rmSync(home, { recursive: true, force: true });
  for (const note of [...runs.notes, ...counts.notes].slice(0, 20)) log(`${p.name}: ${note}`);
  log(
    `${p.name}: ${counts.tasks} tasks, ${runs.total} handler executions, ` +
      `${counts.extraCreations} extra creations from lost create replies`,
  );
  return {
    ...counts,
    executions: runs.total,
    duplicateOnce: runs.duplicateOnce,
    crashes: crashes - crashesBefore,
    unhandledRejections: tally.unhandledRejections - rejectionsBefore,
    overLimit: overlap.overLimit,
    wakeJobsLeft,
  };
}

/**
 * Every 2–5 s one fault: a victim SIGKILLed or SIGTERMed (then restarted), or a store fault once
 * its time has come (spread over the chaos time, never two faults at once, every one run even
 * on a slow machine); and half the clients are killed once each (then resumed from their ledgers).
 */
interface Targets {
  victims: Victim[];
  faults: StoreFault[];
  clients: Proc[];
  route: () => void;
  resume: (i: number) => Proc;
}

async function chaosLoop(chaosMs: number, targets: Targets): Promise<void> {
  const { victims, faults, clients, route, resume } = targets;
  const startedAt = Date.now();
  const ends = startedAt + chaosMs;
  const toKill = new Set(clients.map((_, i) => i).filter((i) => i % 2 === 0));
  const pending = faults.map((fault, i) => ({
    fault,
    dueAt: startedAt + (chaosMs * (i + 1)) / (faults.length + 2),
  }));
  while (Date.now() < ends) {
    await pause(between(2000, 5000));
    const due = pending[0] !== undefined && pending[0].dueAt <= Date.now();
    if (due) await runFault((pending.shift() as { fault: StoreFault }).fault);
    else await stopAndRestart(victims[Math.floor(random() * victims.length)] as Victim, route);
    const client = [...toKill][0];
    if (client !== undefined && random() < 0.7) {
      toKill.delete(client);
      log(`SIGKILL client ${client}, then resume from its ledger`);
      await clients[client]?.kill('SIGKILL');
      resume(client);
    }
  }
  for (const { fault } of pending) await runFault(fault, ' (late: the machine is slow)');
}

async function runFault(fault: StoreFault, note = ''): Promise<void> {
  log(`store fault: ${fault.name}${note}`);
  await fault.run();
}

async function stopAndRestart(victim: Victim, route: () => void): Promise<void> {
  const signal = random() < 0.3 ? 'SIGTERM' : 'SIGKILL';
  log(`${signal} ${victim.name}`);
  await stopVictim(victim, signal);
  await pause(between(100, 1000));
  const restarting = Date.now();
  await restartOrCount(victim);
  const took = Date.now() - restarting;
  if (took > 5000) log(`${victim.name} took ${took} ms to come back`);
  route();
}

/** A victim that will not come back is a crash of the run, counted; one more try. */
async function restartOrCount(victim: Victim): Promise<void> {
  for (let attempt = 1; attempt <= 2; attempt += 1) {
    try {
      return await victim.restart();
    } catch (error) {
      crashes += 1;
      log(`CRASH: ${victim.name} did not start again (${String(error).split('\n')[0]})`);
    }
  }
}

function servers(count: number, extra: string[]): (store: string) => Promise<Victim[]> {
  return async (store) =>
    Promise.all(
      Array.from({ length: count }, async (_, i) => {
        const name = `serve ${i}`;
        const first = await serve(store, extra);
        const victim: Victim = {
          name,
          ...first,
          proc: watched(first.proc, name),
          async restart() {
            const next = await serve(store, extra);
            Object.assign(victim, { ...next, proc: watched(next.proc, name) });
          },
        };
        return victim;
      }),
    );
}

/** Workers; with `shift`, the first one runs with its wall clock moved (faketime). */
async function workers(store: string, count: number, shift?: string): Promise<Victim[]> {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const wrapper = i === 0 && shift !== undefined ? shiftedClock(shift) : [];
      const name = wrapper.length > 0 ? `worker ${i} (clock ${shift})` : `worker ${i}`;
      const victim: Victim = {
        name,
        proc: watched(await worker(store, wrapper), name),
        async restart() {
          victim.proc = watched(await worker(store, wrapper), name);
        },
      };
      return victim;
    }),
  );
}

async function sqlitePhase(): Promise<PhaseResult> {
  const disk = mountSmallDisk(256);
  const dir = typeof disk === 'string' ? mkdtempSync(join(tmpdir(), 'taskrail-chaos-')) : disk.path;
  if (typeof disk === 'string') log(`sqlite: full-disk fault skipped: ${disk}`);
  const file = join(dir, 'tasks.db');
  const faults: StoreFault[] = [
    {
      name: 'another process holds the SQLite write lock for 6 s',
      run: () => holdSqliteLock(file, 6000),
    },
  ];
  if (typeof disk !== 'string') {
    faults.push({
      name: 'the disk under the SQLite file is full for 4 s',
      run: () => fillDisk(dir, 4000),
    });
  }
  try {
    return await phase({
      name: 'sqlite',
      store: `sqlite:${file}`,
      clients: 6,
      perClient: 50,
      firstN: 1,
      victims: servers(1, []),
      faults,
    });
  } finally {
    if (typeof disk === 'string') rmSync(dir, { recursive: true, force: true });
    else disk.unmount();
  }
}

async function redisPhase(): Promise<PhaseResult | undefined> {
  const own = await startChaosRedis();
  const shared = process.env['TASKRAIL_REDIS_URL'];
  if (typeof own === 'string' && (shared === undefined || shared === '')) {
    log(`redis phase skipped: ${own}, and TASKRAIL_REDIS_URL is not set`);
    return undefined;
  }
  const url = new URL(typeof own === 'string' ? (shared as string) : own.url);
  const prefix = `chaos-${randomBytes(4).toString('hex')}`;
  url.searchParams.set('prefix', prefix);
  const faults: StoreFault[] = [];
  if (typeof own === 'string') log(`redis: restart fault skipped (${own}); using the shared Redis`);
  else
    faults.push({ name: 'redis-server (AOF) restarts, down 1.5 s', run: () => own.restart(1500) });
  const noFaketime = faketimeMissing();
  if (noFaketime !== undefined) log(`redis: shifted-clock worker skipped: ${noFaketime}`);
  const cut = await partitionedWorker(url.toString(), (store, count) => workers(store, count));
  faults.push(cut.fault);
  try {
    return await phase({
      name: 'redis',
      store: url.toString(),
      clients: 4,
      perClient: 50,
      firstN: 100_001,
      victims: async (store) => [
        ...(await servers(2, ['--no-worker'])(store)),
        ...(await workers(store, 2, noFaketime === undefined ? '+30s' : undefined)),
        ...(await cut.victims(store)),
      ],
      faults,
    });
  } finally {
    await cut.close();
    if (typeof own === 'string') await deleteRedisKeys(url.toString(), prefix);
    else await own.stop();
  }
}

async function main(): Promise<number> {
  process.stdout.write(`chaos seed ${seed} (replay with CHAOS_SEED=${seed})\n`);
  const results: PhaseResult[] = wanted('sqlite') ? [await sqlitePhase()] : [];
  const redis = wanted('redis') ? await redisPhase() : undefined;
  if (redis !== undefined) results.push(redis);
  const shift = faketimeMissing() === undefined ? '+30s' : undefined;
  const kit = { phase, servers, workers, log, shift, wanted };
  results.push(...(await postgresPhases(kit)));
  results.push(...(await policyPhases(kit)));
  results.push(...(await wakeupPhases(kit)));
  const sum = (key: keyof Omit<PhaseResult, 'notes'>) => results.reduce((a, c) => a + c[key], 0);
  const bad =
    sum('lost') +
    sum('duplicateOnce') +
    sum('wrong') +
    sum('crashes') +
    sum('unhandledRejections') +
    sum('duplicated') +
    sum('stuck') +
    sum('extraCreations') +
    sum('overLimit') +
    sum('wakeJobsLeft');
  process.stdout.write(
    `chaos: tasks ${sum('tasks')}, lost ${sum('lost')}, ` +
      `duplicate executions ${sum('duplicateOnce')} (retry:false), wrong outcomes ${sum('wrong')}, ` +
      `crashes ${sum('crashes')}, unhandled rejections ${sum('unhandledRejections')}, ` +
      `duplicated terminal writes ${sum('duplicated')}, ` +
      `stuck ${sum('stuck')}, duplicate creations ${sum('extraCreations')}, ` +
      `permit overlaps over the limit ${sum('overLimit')}, ` +
      `wake-up jobs left ${sum('wakeJobsLeft')}, ` +
      `handler executions ${sum('executions')}\n`,
  );
  return bad === 0 ? 0 : 1;
}

process.exit(await main());
