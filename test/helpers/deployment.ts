/**
 * Scaffolding of the multi-process deployment tests (Redis and Postgres): `serve` replicas and
 * `taskrail worker`s as real processes on one store, reached over HTTP, and the log the
 * fixture tools append `<event> <taskId> <pid>` lines to.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createHttpDispatch, type RawDispatch } from '../../src/client/rpc-http.js';
import type { Child } from './child.js';
import { startServing, startWorker } from './taskrail.js';
import { waitFor } from './wait.js';

export interface Deployment {
  /** Every process started so far. */
  children: Child[];
  /** `serve --no-worker` on the store; resolves with a dispatch to it once it listens. */
  replica(): Promise<RawDispatch>;
  /** `serve` (with `--no-worker` unless `worker`) once it listens: a dispatch and its process. */
  server(options: { worker: boolean }): Promise<Served>;
  /** `taskrail worker --concurrency 2` on the store, once it says it is ready. */
  worker(): Promise<Child>;
  /** The fixture tools' events so far. */
  events(): LogEvent[];
  stopAll(): Promise<void>;
}

export interface Served {
  dispatch: RawDispatch;
  child: Child;
}

/**
 * A process that has not exited this long after SIGTERM gets SIGKILL, as an operator's
 * supervisor would do (Kubernetes' default): a test's teardown must not hang on one. A
 * graceful stop is bounded at 20 s (src/cli/graceful-stop.ts), so a kill here is a bug.
 */
const STOP_GRACE_MS = 30_000;

export function deployment(options: {
  store: string;
  tools: string;
  logPath: string;
  logLevel?: string;
  /** More environment for every process. */
  env?: NodeJS.ProcessEnv;
}): Deployment {
  const children: Child[] = [];
  const logLevel = options.logLevel ?? 'warn';
  const common = ['--store', options.store, '--tools', options.tools, '--log-level', logLevel];
  const env = { ...options.env, TASKRAIL_E2E_LOG: options.logPath };
  const server = async ({ worker }: { worker: boolean }): Promise<Served> => {
    const serveArgs = ['serve', ...(worker ? [] : ['--no-worker']), '--port', '0', ...common];
    const { url, child } = await startServing(serveArgs, { env });
    children.push(child);
    return { dispatch: dispatchTo(url), child };
  };
  return {
    children,
    replica: async () => (await server({ worker: false })).dispatch,
    server,
    async worker() {
      const child = await startWorker(['--concurrency', '2', ...common], { env });
      children.push(child);
      return child;
    },
    events: () => readEventLog(options.logPath),
    async stopAll() {
      await Promise.all(children.map((child) => child.stop(STOP_GRACE_MS)));
    },
  };
}

export function dispatchTo(endpoint: string, headers?: Record<string, string>): RawDispatch {
  return createHttpDispatch({
    url: endpoint,
    ...(headers === undefined ? {} : { headers }),
    framing: {
      protocolVersion: '2026-07-28',
      clientInfo: { name: 'taskrail-e2e', version: '0' },
      clientCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } },
    },
  });
}

/** The new task's id; fails the test when the replica answers anything but a task. */
export async function createTask(
  replica: RawDispatch,
  name: string,
  args: object,
): Promise<string> {
  const taskId = await tryCreateTask(replica, name, args);
  assert.ok(taskId !== undefined, `tools/call ${name} was refused`);
  return taskId;
}

/** The new task's id, or undefined when the replica refused the call (an error reply). */
export async function tryCreateTask(
  replica: RawDispatch,
  name: string,
  args: object,
): Promise<string | undefined> {
  const reply = await replica({ method: 'tools/call', params: { name, arguments: args } });
  if (reply.kind !== 'result') return undefined;
  const task = (reply.result['task'] ?? reply.result) as { taskId?: unknown };
  assert.equal(typeof task.taskId, 'string', `a CreateTaskResult: ${JSON.stringify(reply)}`);
  return task.taskId as string;
}

/** The task's status as the replica reports it, or `error …` when it answers with an error. */
export async function statusOn(replica: RawDispatch, taskId: string): Promise<string> {
  const reply = await replica({ method: 'tasks/get', params: { taskId } });
  return reply.kind === 'result' ? String(reply.result['status']) : `error ${reply.error.message}`;
}

export function reach(
  replica: RawDispatch,
  taskId: string,
  status: string,
  timeoutMs: number,
): Promise<boolean> {
  return waitFor(
    `task ${taskId} to be ${status}`,
    async () => (await statusOn(replica, taskId)) === status,
    { timeoutMs, intervalMs: 50 },
  );
}

export interface LogEvent {
  event: string;
  taskId: string;
  pid: number;
}

export function readEventLog(path: string): LogEvent[] {
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const [event, taskId, pid] = line.split(' ');
      return { event: event as string, taskId: taskId as string, pid: Number(pid) };
    });
}
