import type { Cluster, Command } from 'ioredis';
import { timerDelay } from '../../task/timers.js';

/**
 * A Redis Cluster's commands get a bound that a failover cannot cut. A single Redis's commands
 * time out after 5 s; on a Cluster the same time-out refused writes to a master that had frozen
 * and been failed over (they are answered when it wakes, see replica-acks.ts). To this process a
 * frozen master and a master it alone cannot reach look the same: no answer. The other nodes
 * tell them apart. So a command still unanswered after `firstLookMs` is judged, once a second,
 * by what another node says (`CLUSTER NODES`):
 *
 * - no node answers: this process is cut off from the cluster; the command fails now;
 * - a master is flagged failing (`fail?`, `fail`): a failover is under way or just done; the
 *   command waits, at most twice the cluster's node time-out plus `failoverMarginMs`;
 * - all masters are healthy: a frozen master would be flagged once the node time-out passed,
 *   so after that (plus `healthyMarginMs`) the silence is this process's link: it fails.
 *
 * A command that fails says "Command timed out", which the store counts as store trouble.
 */
export interface Patience {
  firstLookMs: number;
  lookEveryMs: number;
  /** How long one node may take to answer a look. */
  probeMs: number;
  healthyMarginMs: number;
  failoverMarginMs: number;
  /** Redis's default `cluster-node-timeout`, used when the nodes will not say theirs. */
  defaultNodeTimeoutMs: number;
}

export const CLUSTER_PATIENCE: Patience = {
  firstLookMs: 5_000,
  lookEveryMs: 1_000,
  probeMs: 2_000,
  healthyMarginMs: 2_000,
  failoverMarginMs: 10_000,
  defaultNodeTimeoutMs: 15_000,
};

type Verdict = 'unreachable' | 'failing over' | 'healthy';
type Stream = Parameters<Cluster['sendCommand']>[1];

/** Bounds every command sent through `cluster` (not its duplicates: a subscriber waits). */
export function boundClusterCommands(cluster: Cluster, patience = CLUSTER_PATIENCE): void {
  const view = new ClusterView(cluster, patience);
  const watched = new WeakSet<Command>();
  const send = cluster.sendCommand.bind(cluster);
  cluster.sendCommand = (command: Command, stream?: Stream, node?: unknown) => {
    if (!watched.has(command)) {
      watched.add(command);
      watchCommand(command, view, patience);
    }
    return send(command, stream, node);
  };
}

function watchCommand(command: Command, view: ClusterView, patience: Patience): void {
  const sentAt = Date.now();
  let settled = false;
  let timer: NodeJS.Timeout | undefined;
  const schedule = (ms: number) => {
    timer = setTimeout(() => void look(), timerDelay(ms));
    timer.unref();
  };
  const look = async (): Promise<void> => {
    if (settled) return;
    const [verdict, nodeTimeoutMs] = await Promise.all([view.verdict(), view.nodeTimeoutMs()]);
    if (settled) return;
    if (givesUp(verdict, Date.now() - sentAt, nodeTimeoutMs, patience)) {
      command.reject(new Error('Command timed out'));
    } else schedule(patience.lookEveryMs);
  };
  const done = () => {
    settled = true;
    clearTimeout(timer);
  };
  command.promise.then(done, done);
  schedule(patience.firstLookMs);
}

function givesUp(
  verdict: Verdict,
  waitedMs: number,
  nodeTimeoutMs: number,
  patience: Patience,
): boolean {
  if (verdict === 'unreachable') return true;
  if (verdict === 'healthy') return waitedMs >= nodeTimeoutMs + patience.healthyMarginMs;
  return waitedMs >= 2 * nodeTimeoutMs + patience.failoverMarginMs;
}

/** What the nodes say, asked at most once per `lookEveryMs` for all waiting commands. */
class ClusterView {
  readonly #cluster: Cluster;
  readonly #patience: Patience;
  #last: { at: number; verdict: Promise<Verdict> } | undefined;
  #nodeTimeoutMs: number | undefined;

  constructor(cluster: Cluster, patience: Patience) {
    this.#cluster = cluster;
    this.#patience = patience;
  }

  verdict(): Promise<Verdict> {
    const now = Date.now();
    if (this.#last === undefined || now - this.#last.at >= this.#patience.lookEveryMs) {
      this.#last = { at: now, verdict: this.#look() };
    }
    return this.#last.verdict;
  }

  async nodeTimeoutMs(): Promise<number> {
    if (this.#nodeTimeoutMs !== undefined) return this.#nodeTimeoutMs;
    try {
      const reply = await this.#askAny('CONFIG', 'GET', 'cluster-node-timeout');
      const ms = Number((reply as unknown[])[1]);
      this.#nodeTimeoutMs = ms > 0 ? ms : this.#patience.defaultNodeTimeoutMs;
      return this.#nodeTimeoutMs;
    } catch {
      return this.#patience.defaultNodeTimeoutMs; // unreachable, or CONFIG refused: ask again
    }
  }

  async #look(): Promise<Verdict> {
    try {
      const nodes = String(await this.#askAny('CLUSTER', 'NODES'));
      return aMasterFailing(nodes) ? 'failing over' : 'healthy';
    } catch {
      return 'unreachable';
    }
  }

  /** The first answer of any node (a node this process cannot reach never answers). */
  #askAny(...args: string[]): Promise<unknown> {
    const [name, ...rest] = args as [string, ...string[]];
    return Promise.any(
      this.#cluster.nodes('all').map((node) => within(node.call(name, ...rest), this.#patience)),
    );
  }
}

function within<T>(work: Promise<T>, patience: Patience): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('no answer')), timerDelay(patience.probeMs));
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** `CLUSTER NODES` lines: `<id> <addr> <flags> …`; flags e.g. `master,fail?` or `myself,master`. */
function aMasterFailing(nodes: string): boolean {
  return nodes.split('\n').some((line) => {
    const flags = (line.split(' ')[2] ?? '').split(',');
    return flags.includes('master') && (flags.includes('fail') || flags.includes('fail?'));
  });
}
