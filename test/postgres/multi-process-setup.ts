/**
 * What the multi-process Postgres suites share: two `serve --no-worker` replicas and two
 * `taskrail worker`s as real processes on one fresh PostgreSQL schema (started in `before`,
 * stopped and dropped in `after`), an observer store counting terminal writes, and the log
 * the fixture tools append `<event> <taskId> <pid>` lines to. Call it inside a `describe`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import type { RawDispatch } from '../../src/client/rpc-http.js';
import type { TaskStore } from '../../src/store/port.js';
import { openPostgresStore } from '../../src/stores/postgres/index.js';
import { isTerminal } from '../../src/task/status.js';
import type { Child } from '../helpers/child.js';
import { deployment, type LogEvent } from '../helpers/deployment.js';
import { waitFor } from '../helpers/wait.js';
import { dropSchema, sql, uniqueSchema, urlWithSchema } from './postgres-env.js';

/** A killed worker's task is taken over by the next recovery scan (every 15 s, the lease). */
export const PICKUP_MS = 60_000;
const TOOLS = '.build/test/postgres/fixtures/e2e-tools.js';

export interface PgDeployment {
  replicaA: () => RawDispatch;
  replicaB: () => RawDispatch;
  observer: () => TaskStore;
  /** Terminal writes seen per task id: exactly one each is expected. */
  terminalWrites: Map<string, number>;
  workers: () => Child[];
  children: () => Child[];
  startWorker(): Promise<Child>;
  /** Both replicas and two workers, all started at once. */
  startAll(): Promise<void>;
  forgetWorkers(): void;
  events(): LogEvent[];
  find(event: string, taskId: string): Promise<LogEvent>;
  killWorkerRunning(pid: number): Promise<Child>;
  /** On failure, the task's row, its jobs and the processes' warnings join the error. */
  explained<T>(work: Promise<T>, taskId: string): Promise<T>;
}

export function pgDeployment(): PgDeployment {
  const schema = uniqueSchema();
  const url = urlWithSchema(schema);
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-pg-e2e-'));
  const processes = deployment({ store: url, tools: TOOLS, logPath: join(dir, 'events.log') });
  let workers: Child[] = [];
  const terminalWrites = new Map<string, number>();
  let observer: TaskStore | undefined;
  let replicas: RawDispatch[] = [];

  const startWorker = async () => {
    const worker = await processes.worker();
    workers.push(worker);
    return worker;
  };
  const startAll = async () => {
    const [a, b] = await Promise.all([
      processes.replica(),
      processes.replica(),
      startWorker(),
      startWorker(),
    ]);
    replicas = [a, b];
  };

  before(async () => {
    observer = await openPostgresStore(url);
    observer.events.on('task:transition', ({ task, to }) => {
      if (isTerminal(to)) terminalWrites.set(task.id, (terminalWrites.get(task.id) ?? 0) + 1);
    });
    await startAll();
  });

  after(async () => {
    await processes.stopAll();
    await observer?.close();
    await dropSchema(schema);
    rmSync(dir, { recursive: true, force: true });
  });

  const events = () => processes.events();
  return {
    replicaA: () => replicas[0] as RawDispatch,
    replicaB: () => replicas[1] as RawDispatch,
    observer: () => observer as TaskStore,
    terminalWrites,
    workers: () => workers,
    children: () => processes.children,
    startWorker,
    startAll,
    forgetWorkers: () => void (workers = []),
    events,
    find: (event, taskId) =>
      waitFor(
        `${event} of task ${taskId}`,
        () => events().find((e) => e.event === event && e.taskId === taskId),
        { timeoutMs: PICKUP_MS },
      ),
    async killWorkerRunning(pid) {
      const victim = workers.find((worker) => worker.process.pid === pid);
      assert.ok(victim, `worker ${pid} runs the task`);
      await victim.kill('SIGKILL');
      workers = workers.filter((worker) => worker !== victim);
      return victim;
    },
    async explained(work, taskId) {
      try {
        return await work;
      } catch (error) {
        const rows = await sql(
          `SELECT status, revision, lease_owner, lease_expires_at FROM "${schema}".tasks
            WHERE id = $1`,
          [taskId],
        );
        const jobs = await sql(
          `SELECT key, run_at, attempts, locked_at, locked_by FROM "${schema}_jobs"._private_jobs`,
        );
        const stderr = processes.children.map((c) => `${c.process.pid}: ${c.stderr()}`);
        const state = JSON.stringify({ task: rows, jobs, stderr }, null, 1);
        throw new Error(`${(error as Error).message}\n${state}`, { cause: error });
      }
    },
  };
}
