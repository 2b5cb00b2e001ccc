import type { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { TaskStore } from '../../store/port.js';
import { importWithPeers } from '../../task/peer-dependency.js';
import type { TaskRecord } from '../../task/record.js';
import type { TaskStatus } from '../../task/status.js';
import type { StoreProbe } from './instrument-store.js';
import type { RetryReason, RunObserver } from '../../runtime/api.js';
import { outcomeOf } from '../../task/outcome.js';
import { METRICS_PEERS } from './peers.js';

type PromClient = typeof import('prom-client');

interface MetricSet {
  registry: Registry;
  created: Counter<'tool'>;
  finished: Counter<'tool' | 'outcome'>;
  duration: Histogram<'tool' | 'outcome'>;
  running: Gauge;
  parked: Gauge;
  queue: Gauge;
  storeErrors: Counter<'operation'>;
  claims: Counter;
  renewals: Counter<'outcome'>;
  timeouts: Counter<'tool'>;
  retries: Counter<'tool' | 'reason'>;
  retriedFinished: Counter<'tool' | 'outcome'>;
  waits: Counter<'tool' | 'kind'>;
  permitWaits: Counter<'tool'>;
}

/** A gauge read at scrape time; undefined leaves it out of that scrape's value (kept as last set). */
export interface ExtraGauge {
  name: string;
  help: string;
  value: () => number | undefined;
}

/** Live counts read from the store at scrape time are capped, so a scrape stays cheap. */
const COUNT_CAP = 10_000;
const PAGE = 1000;
const MAX_QUEUED = 10_000;

/**
 * The Prometheus metrics of one server. prom-client is imported when the admin face is
 * created (never without `--admin`); what happens before it has loaded is queued and replayed.
 * Counters come from store events, so on Redis they include every replica's tasks.
 */
export class AdminMetrics implements StoreProbe, RunObserver {
  readonly #store: () => TaskStore;
  readonly #loaded: Promise<MetricSet>;
  #set: MetricSet | undefined;
  #queue: ((set: MetricSet) => void)[] = [];

  constructor(store: () => TaskStore, gauges: readonly ExtraGauge[] = []) {
    this.#store = store;
    const load = async (): Promise<PromClient> => import('prom-client');
    this.#loaded = importWithPeers(load, METRICS_PEERS.packages, METRICS_PEERS.feature).then(
      (client) => {
        const set = buildMetrics(client);
        for (const extra of gauges) addGauge(client, set.registry, extra);
        this.#set = set;
        for (const apply of this.#queue.splice(0)) apply(set);
        return set;
      },
    );
    this.#loaded.catch(() => undefined);
  }

  taskCreated(task: TaskRecord): void {
    this.#record((m) => m.created.inc({ tool: task.tool }));
  }

  taskFinished(task: TaskRecord): void {
    const labels = { tool: task.tool, outcome: outcomeOf(task) };
    const seconds = Math.max(0, task.updatedAt - task.createdAt) / 1000;
    this.#record((m) => {
      m.finished.inc(labels);
      m.duration.observe(labels, seconds);
      if (task.attempt > 1) m.retriedFinished.inc(labels);
    });
  }

  attemptTimedOut(tool: string): void {
    this.#record((m) => m.timeouts.inc({ tool }));
  }

  retrying(tool: string, reason: RetryReason): void {
    this.#record((m) => m.retries.inc({ tool, reason }));
  }

  waiting(tool: string, kind: 'backoff' | 'sleep'): void {
    this.#record((m) => m.waits.inc({ tool, kind }));
  }

  permitWaiting(tool: string): void {
    this.#record((m) => m.permitWaits.inc({ tool }));
  }

  storeError(operation: string): void {
    this.#record((m) => m.storeErrors.inc({ operation }));
  }

  leaseClaimed(): void {
    this.#record((m) => m.claims.inc());
  }

  leaseRenewed(held: boolean): void {
    this.#record((m) => m.renewals.inc({ outcome: held ? 'held' : 'lost' }));
  }

  /** The text exposition, with the live gauges read from the store now. */
  async render(): Promise<{ contentType: string; body: string }> {
    const set = await this.#loaded;
    const live = await liveCounts(this.#store()).catch(() => undefined);
    if (live !== undefined) {
      set.running.set(Math.max(0, live.working - live.runnable));
      set.queue.set(live.runnable);
      set.parked.set(live.parked);
    }
    return { contentType: set.registry.contentType, body: await set.registry.metrics() };
  }

  #record(apply: (set: MetricSet) => void): void {
    if (this.#set !== undefined) apply(this.#set);
    else if (this.#queue.length < MAX_QUEUED) this.#queue.push(apply);
  }
}

function buildMetrics(client: PromClient): MetricSet {
  const registry = new client.Registry();
  const registers = [registry];
  const labelled = <L extends string>(name: string, help: string, labelNames: L[]) =>
    new client.Counter<L>({ name, help, labelNames, registers });
  const gauge = (name: string, help: string) => new client.Gauge({ name, help, registers });
  return {
    registry,
    created: labelled('taskrail_tasks_created_total', 'Tasks created.', ['tool']),
    finished: labelled(
      'taskrail_tasks_finished_total',
      'Tasks that ended, by outcome (completed, tool_error, failed, cancelled).',
      ['tool', 'outcome'],
    ),
    duration: new client.Histogram({
      name: 'taskrail_task_duration_seconds',
      help: 'Time from creation to a terminal status.',
      labelNames: ['tool', 'outcome'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600],
      registers,
    }),
    running: gauge('taskrail_tasks_running', 'Working tasks held by a worker now.'),
    parked: gauge('taskrail_tasks_parked', 'Tasks waiting for input (input_required).'),
    queue: gauge('taskrail_queue_depth', 'Working tasks no worker holds yet (queued or resumed).'),
    storeErrors: labelled('taskrail_store_errors_total', 'Failed task store calls.', ['operation']),
    claims: new client.Counter({
      name: 'taskrail_lease_claims_total',
      help: 'Task leases taken by this process (executions started).',
      registers,
    }),
    renewals: labelled('taskrail_lease_renewals_total', 'Lease heartbeats by this process.', [
      'outcome',
    ]),
    timeouts: labelled(
      'taskrail_attempt_timeouts_total',
      "Attempts run here that reached their tool's timeoutMs (their slot given back at once).",
      ['tool'],
    ),
    retries: labelled(
      'taskrail_retries_total',
      'Attempts that follow a failed one, decided here, by why: error, timeout, interrupted.',
      ['tool', 'reason'],
    ),
    retriedFinished: labelled(
      'taskrail_retried_tasks_finished_total',
      'Tasks that ended after more than one attempt, by outcome (did the retries pay off).',
      ['tool', 'outcome'],
    ),
    waits: labelled(
      'taskrail_durable_waits_total',
      'Durable waits set here: a retry backoff (kind backoff) or ctx.sleep (kind sleep).',
      ['tool', 'kind'],
    ),
    permitWaits: labelled(
      'taskrail_permit_waits_total',
      'Starts refused here for want of a concurrency permit (the task waits for one).',
      ['tool'],
    ),
  };
}

function addGauge(client: PromClient, registry: Registry, extra: ExtraGauge): void {
  new client.Gauge({
    name: extra.name,
    help: extra.help,
    registers: [registry],
    collect() {
      const value = extra.value();
      if (value !== undefined) this.set(value);
    },
  });
}

async function liveCounts(
  store: TaskStore,
): Promise<{ working: number; parked: number; runnable: number }> {
  const [working, parked, runnable] = await Promise.all([
    countStatus(store, 'working'),
    countStatus(store, 'input_required'),
    store.findRunnable(COUNT_CAP).then((ids) => ids.length),
  ]);
  return { working, parked, runnable };
}

async function countStatus(store: TaskStore, status: TaskStatus): Promise<number> {
  let count = 0;
  let cursor: string | undefined;
  do {
    const page = await store.list({
      statuses: [status],
      limit: PAGE,
      ...(cursor === undefined ? {} : { cursor }),
    });
    count += page.tasks.length;
    cursor = page.nextCursor;
  } while (cursor !== undefined && count < COUNT_CAP);
  return count;
}
