/**
 * The partition fault of the Redis and PostgreSQL phases: one more worker whose every store
 * connection goes through a TCP relay (test/helpers/tcp-relay.ts), cut off mid-run — first a
 * blackhole longer than the 15 s lease (its leases run out; the others take its tasks over and
 * it must stop its own runs before then), then its connections reset — and healed. Restarted
 * by the chaos loop, it comes back behind the same relay.
 */
import { startTcpRelay, type TcpRelay } from '../test/helpers/tcp-relay.js';
import type { Proc } from './procs.js';

const BLACKHOLE_MS = 20_000;
const RESET_MS = 5_000;

interface Victim {
  name: string;
  proc: Proc;
  port?: number;
  restart(): Promise<void>;
}

export interface PartitionedWorker {
  /** The worker behind the relay, for the phase's victims. */
  victims(store: string): Promise<Victim[]>;
  fault: { name: string; run(): Promise<void> };
  close(): Promise<void>;
}

export async function partitionedWorker(
  store: string,
  workers: (store: string, count: number) => Promise<Victim[]>,
): Promise<PartitionedWorker> {
  const url = new URL(store);
  const relay: TcpRelay = await startTcpRelay({
    host: url.hostname === 'localhost' ? '127.0.0.1' : url.hostname,
    port: Number(url.port),
  });
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  return {
    async victims(phaseStore) {
      const [victim] = await workers(relay.urlFor(phaseStore), 1);
      const named = victim as Victim;
      named.name = 'worker behind the relay';
      return [named];
    },
    fault: {
      name: `a worker cut off from the store: blackhole ${BLACKHOLE_MS / 1000} s, then reset ${RESET_MS / 1000} s`,
      async run() {
        relay.setMode('blackhole');
        await pause(BLACKHOLE_MS);
        relay.setMode('reset');
        await pause(RESET_MS);
        relay.setMode('pass');
      },
    },
    close: () => relay.close(),
  };
}
