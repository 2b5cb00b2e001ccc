/**
 * A run-policy harness on a shared store (Redis + BullMQ, PostgreSQL + graphile-worker): a
 * `serve --no-worker` replica creates the tasks over HTTP, `taskrail worker --concurrency 1`
 * processes run them, and an observer store reads them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RawDispatch } from '../../src/client/rpc-http.js';
import type { TaskStore } from '../../src/store/port.js';
import { openStore } from '../../src/stores/open.js';
import type { Child } from './child.js';
import { createTask, dispatchTo } from './deployment.js';
import type { PolicyHarness } from './run-policy-scenarios.js';
import { startServing, startWorker } from './taskrail.js';

const TOOLS = '.build/test/fixtures/policy-tools-module.js';

export interface PolicyDeployment {
  harness: PolicyHarness;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function policyDeployment(url: string): PolicyDeployment {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-policy-e2e-'));
  const journal = join(dir, 'journal.log');
  const children: Child[] = [];
  let observer: TaskStore | undefined;
  let replica: RawDispatch | undefined;
  const common = ['--store', url, '--tools', TOOLS, '--log-level', 'warn'];
  const env = { TASKRAIL_E2E_LOG: journal };
  const harness: PolicyHarness = {
    journal,
    pickupMs: 60_000,
    create: (tool, args = {}) => createTask(replica as RawDispatch, tool, args),
    get: (id) => (observer as TaskStore).get(id),
    leased: async () => ((await (observer as TaskStore).findLeased(1000)) ?? []).map((l) => l.id),
    async startRunner(slots = 1) {
      const worker = await startWorker(['--concurrency', String(slots), ...common], { env });
      children.push(worker);
      return worker;
    },
  };
  return {
    harness,
    async start() {
      observer = await openStore(url);
      const serving = await startServing(['serve', '--no-worker', '--port', '0', ...common], {
        env,
      });
      children.push(serving.child);
      replica = dispatchTo(serving.url);
    },
    async stop() {
      await Promise.all(children.map((child) => child.stop()));
      await observer?.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
