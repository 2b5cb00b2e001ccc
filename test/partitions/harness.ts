/**
 * What the partition suites share (Redis, Redis Cluster, PostgreSQL): workers as real processes
 * with a short lease, each either straight on the store or behind a TCP relay the test cuts
 * and heals; a `serve --no-worker` replica to create and read tasks; an observer store that
 * counts terminal writes; and the journal the tools write on every start, end and abort.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RawDispatch } from '../../src/client/rpc-http.js';
import type { TaskStore } from '../../src/store/port.js';
import type { TaskRecord } from '../../src/task/record.js';
import { isTerminal } from '../../src/task/status.js';
import { startNode, type Child } from '../helpers/child.js';
import { createTask, deployment, type Deployment, type Served } from '../helpers/deployment.js';
import {
  startTcpRelay,
  type RelayOptions,
  type RelayTarget,
  type TcpRelay,
} from '../helpers/tcp-relay.js';
import { waitFor } from '../helpers/wait.js';

/** Short enough that a takeover needs seconds, not the 15 s default. */
export const LEASE_MS = 3000;
const WORKER = '.build/test/fixtures/partition-worker.js';
const TOOLS = '.build/test/fixtures/partition-tools.js';
export const UNHANDLED = 'unhandled promise rejection';

export interface JournalLine {
  event: 'start' | 'done' | 'aborted' | 'step';
  taskId: string;
  pid: number;
  attempt: number;
  /** When the tool wrote the line (for the timeline a test prints, never for an assertion). */
  at: number;
  detail: string;
}

export interface PartitionKit {
  /** The replica straight on the store: creates tasks, reads them. */
  replica: RawDispatch;
  observer: TaskStore;
  /** Terminal writes per task: exactly one each is expected. */
  terminalWrites: Map<string, number>;
  /** A worker whose every store connection goes through `relay` (when given). */
  worker(relay?: TcpRelay, env?: NodeJS.ProcessEnv): Promise<Child>;
  /** A `serve --no-worker` replica whose store connections go through `relay`. */
  replicaThrough(relay: TcpRelay): Promise<RawDispatch>;
  /** `serve`, running tasks when `worker`, whose store connections go through `relay`. */
  serverThrough(relay: TcpRelay, options: { worker: boolean }): Promise<Served>;
  relay(options?: RelayOptions): Promise<TcpRelay>;
  journal(): JournalLine[];
  runsOf(taskId: string): JournalLine[];
  create(tool: string, args: object): Promise<string>;
  /** The task once terminal, as the store has it. */
  settled(taskId: string, timeoutMs?: number): Promise<TaskRecord>;
  /** Fails when a process logged an unhandled rejection (each process fails one test only). */
  assertNoUnhandledRejection(): void;
  close(): Promise<void>;
}

export interface StoreUnderTest {
  /** The store URL processes use when straight on the store. */
  url: string;
  /** Where a relay forwards to. */
  target: RelayTarget;
  /** The URL a process behind `relay` uses. */
  urlThrough(relay: TcpRelay): string;
  /** The store's own relay, when one relay to `target` is not enough (a Cluster's nodes). */
  startRelay?(options?: RelayOptions): Promise<TcpRelay>;
  /** Extra environment of a process behind `relay` (a Cluster's address map). */
  envThrough?(relay: TcpRelay): Promise<NodeJS.ProcessEnv>;
  openObserver(): Promise<TaskStore>;
}

export async function partitionKit(store: StoreUnderTest): Promise<PartitionKit> {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-partition-'));
  const journalPath = join(dir, 'journal.log');
  const env = { TASKRAIL_PARTITION_JOURNAL: journalPath };
  const processes: Deployment[] = [];
  const children: Child[] = [];
  const relays: TcpRelay[] = [];
  const deploymentOn = (url: string, extra: NodeJS.ProcessEnv = {}) => {
    const logPath = join(dir, 'unused.log');
    const d = deployment({ store: url, tools: TOOLS, logPath, env: { ...env, ...extra } });
    processes.push(d);
    return d;
  };
  const deploymentThrough = async (relay: TcpRelay) =>
    deploymentOn(store.urlThrough(relay), (await store.envThrough?.(relay)) ?? {});
  const replica = await deploymentOn(store.url).replica();
  const observer = await store.openObserver();
  const terminalWrites = new Map<string, number>();
  observer.events.on('task:transition', ({ task, to }) => {
    if (isTerminal(to)) terminalWrites.set(task.id, (terminalWrites.get(task.id) ?? 0) + 1);
  });
  const journal = (): JournalLine[] => readJournal(journalPath);
  const reported = new Set<Child>();

  const kit: PartitionKit = {
    replica,
    observer,
    terminalWrites,
    async worker(relay, extra = {}) {
      const url = relay === undefined ? store.url : store.urlThrough(relay);
      const nat = relay === undefined ? {} : ((await store.envThrough?.(relay)) ?? {});
      const child = startNode(WORKER, [url, String(LEASE_MS)], { ...env, ...nat, ...extra });
      children.push(child);
      await child.line(/^ready/, 60_000);
      return child;
    },
    replicaThrough: async (relay) => (await deploymentThrough(relay)).replica(),
    serverThrough: async (relay, options) => (await deploymentThrough(relay)).server(options),
    async relay(options) {
      const relay = await (store.startRelay?.(options) ?? startTcpRelay(store.target, options));
      relays.push(relay);
      return relay;
    },
    journal,
    runsOf: (taskId) => journal().filter((line) => line.taskId === taskId),
    create: (tool, args) => createTask(replica, tool, args),
    settled: (taskId, timeoutMs = 60_000) =>
      waitFor(
        `task ${taskId} to end`,
        async () => {
          const task = await observer.get(taskId);
          return task !== undefined && isTerminal(task.status) ? task : undefined;
        },
        { timeoutMs, intervalMs: 100 },
      ),
    assertNoUnhandledRejection() {
      const all = [...children, ...processes.flatMap((d) => d.children)];
      for (const child of all.filter((c) => !reported.has(c))) {
        if (child.stderr().includes(UNHANDLED)) reported.add(child);
        assert.ok(
          !child.stderr().includes(UNHANDLED),
          `process ${child.process.pid} logged an unhandled rejection:\n${child.stderr()}`,
        );
      }
    },
    async close() {
      // Relays first: a process waiting on a cut connection then sees it fail, and can stop.
      await Promise.all(relays.map((relay) => relay.close()));
      await Promise.all(children.map((child) => child.kill('SIGKILL')));
      await Promise.all(processes.map((d) => d.stopAll()));
      await observer.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return kit;
}

function readJournal(path: string): JournalLine[] {
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
      const [event, taskId, pid, attempt, at, ...detail] = line.split(' ');
      return {
        event: event as JournalLine['event'],
        taskId: taskId as string,
        pid: Number(pid),
        attempt: Number(attempt),
        at: Number(at),
        detail: detail.join(' '),
      };
    });
}

/** The text of a completed task's result. */
export function resultText(task: TaskRecord): string {
  const content = (task.result?.['content'] ?? []) as { text?: string }[];
  return content.map((part) => part.text ?? '').join('');
}

/** Holds a cut for `ms`: the length of the partition is the fault itself, not a wait. */
export function holdCut(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Prints a task's runs relative to `since` (the cut), for the report; asserts nothing. */
export function printTimeline(label: string, lines: JournalLine[], since: number): void {
  const steps = lines.map((l) => `${l.event}@${l.pid}#${l.attempt} ${l.at - since} ms`);
  process.stdout.write(`# ${label} (from the cut): ${steps.join(', ')}\n`);
}
